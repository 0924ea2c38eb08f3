/* Replays files through a fuzz target's LLVMFuzzerTestOneInput without
 * libFuzzer (any compiler, any build variant): the committed corpus and
 * every regression input the fuzzers ever found.
 *
 *   fuzz_replay_<target> [--exclude LIST] PATH...
 *
 * A PATH that is a directory stands for every regular file in it (not
 * recursive; names starting with '.' and README* skipped), in name order. LIST is a
 * file of names (one a line, '#' starts a comment) not to replay: reproducers
 * of findings not fixed yet, listed with the reason. Exits 0 when every file
 * was replayed (a crash or sanitizer report ends the process before), 1 on an
 * unreadable path, 2 when nothing was replayed at all. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static char** g_excluded;
static size_t g_excluded_count;

static int read_exclusions(const char* path)
{
    FILE* f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "replay: cannot open exclusion list %s\n", path);
        return 0;
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char* hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char* s = line;
        while (*s == ' ' || *s == '\t') ++s;
        size_t n = strlen(s);
        while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
        if (!n) continue;
        char** grown = realloc(g_excluded, (g_excluded_count + 1) * sizeof *grown);
        char* copy = malloc(n + 1);
        if (!grown || !copy) {
            free(copy);
            fclose(f);
            return 0;
        }
        memcpy(copy, s, n + 1);
        g_excluded = grown;
        g_excluded[g_excluded_count++] = copy;
    }
    fclose(f);
    return 1;
}

static int excluded(const char* name)
{
    for (size_t i = 0; i < g_excluded_count; ++i)
        if (strcmp(g_excluded[i], name) == 0) return 1;
    return 0;
}

static int replay_file(const char* path)
{
    FILE* f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 0;
    }
    size_t cap = 4096, size = 0;
    uint8_t* data = malloc(cap);
    size_t got;
    while (data && (got = fread(data + size, 1, cap - size, f)) > 0) {
        size += got;
        if (size == cap) {
            uint8_t* grown = realloc(data, cap *= 2);
            if (!grown) free(data);
            data = grown;
        }
    }
    fclose(f);
    if (!data) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return 0;
    }
    /* An exact copy, so that a read past the end is past the allocation. */
    uint8_t* exact = malloc(size ? size : 1);
    if (!exact) {
        free(data);
        return 0;
    }
    memcpy(exact, data, size);
    free(data);
    printf("replay: %s (%zu bytes)\n", path, size);
    fflush(stdout);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    return 1;
}

static int by_name(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

/* Returns the number of files replayed, -1 on an error. */
static long replay_path(const char* path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: no such file or directory: %s\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return replay_file(path) ? 1 : -1;
    DIR* dir = opendir(path);
    if (!dir) {
        fprintf(stderr, "replay: cannot read directory %s\n", path);
        return -1;
    }
    char** names = NULL;
    size_t count = 0;
    struct dirent* e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, "README", 6) == 0) continue;
        char** grown = realloc(names, (count + 1) * sizeof *grown);
        if (!grown) break;
        names = grown;
        names[count] = strdup(e->d_name);
        if (names[count]) ++count;
    }
    closedir(dir);
    if (count) qsort(names, count, sizeof *names, by_name);
    long replayed = 0;
    int failed = 0;
    for (size_t i = 0; i < count; ++i) {
        size_t n = strlen(path) + strlen(names[i]) + 2;
        char* full = malloc(n);
        if (full) {
            snprintf(full, n, "%s/%s", path, names[i]);
            struct stat fs;
            if (stat(full, &fs) == 0 && S_ISREG(fs.st_mode)) {
                if (excluded(names[i])) {
                    printf("replay: %s excluded (listed as not fixed yet)\n", full);
                } else if (replay_file(full)) {
                    ++replayed;
                } else {
                    failed = 1;
                }
            }
            free(full);
        }
        free(names[i]);
    }
    free(names);
    return failed ? -1 : replayed;
}

int main(int argc, char** argv)
{
    long total = 0;
    int failed = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--exclude") == 0 && i + 1 < argc) {
            if (!read_exclusions(argv[++i])) failed = 1;
            continue;
        }
        long n = replay_path(argv[i]);
        if (n < 0)
            failed = 1;
        else
            total += n;
    }
    for (size_t i = 0; i < g_excluded_count; ++i) free(g_excluded[i]);
    free(g_excluded);
    printf("replay: %ld file(s) replayed\n", total);
    if (failed) return 1;
    return total ? 0 : 2;
}
