// The C++ tests' checks: a failed CHECK prints where and what, and counts;
// rtcd_run_tests runs each test function and reports how many failed.
#ifndef RTCD_TEST_CHECK_HPP
#define RTCD_TEST_CHECK_HPP

#include <cstdio>
#include <initializer_list>

static int g_failures = 0;
#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                               \
            ++g_failures;                                                                                              \
        }                                                                                                              \
    } while (0)

// The exit code: 0 when every test passed.
static inline int rtcd_run_tests(std::initializer_list<void (*)()> tests)
{
    int passed = 0, failed = 0;
    for (auto t : tests) {
        int before = g_failures;
        t();
        (g_failures == before ? passed : failed)++;
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

#endif
