"""Builds the rtcd Python package: a cffi extension (API mode) over librtcd.

Where the C libraries come from, in this order:

1. ``RTCD_BUILD_DIR``: a CMake build tree of this checkout (``build/release``);
   its ``librtcd``, ``librtcd_bullet`` and, where assimp was found,
   ``librtcd_import``, with the headers of the source tree it was configured
   from. The test runner uses this: the bindings run the very libraries the C
   demos and tests run, and nothing is compiled twice.
2. ``RTCD_PREFIX``: an installed rtcd (``cmake --install build/release
   --prefix DIR``): ``DIR/include`` and ``DIR/lib*``.
3. Neither: the checkout two folders up is configured and its libraries
   built with CMake into ``RTCD_CMAKE_BUILD_DIR`` (default
   ``<checkout>/build/python``, kept so that a second install is incremental),
   so ``pip install ./bindings/python`` works from a bare checkout.

The libraries are copied into the package (``rtcd/_libs``) and the
extension's run path is ``$ORIGIN/_libs``: the installed package does not
depend on the build tree staying where it was (Ray workers, CI caches).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple, Optional

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import build_ffi  # noqa: E402  (beside this file)

LIBS = ("rtcd", "rtcd_bullet", "rtcd_import")  # the last one optional


class CLibs(NamedTuple):
    include_dir: Path
    libraries: dict  # name -> path of its soname file (librtcd.so.0)


def soname_file(folder: Path, name: str) -> Optional[Path]:
    """``lib<name>.so.<major>`` in folder (what the extension's DT_NEEDED names)."""
    pattern = re.compile(rf"^lib{re.escape(name)}\.so\.\d+$")
    found = sorted(p for p in folder.glob(f"lib{name}.so.*") if pattern.match(p.name))
    return found[0] if found else None


def from_build_dir(build: Path) -> CLibs:
    cache = build / "CMakeCache.txt"
    if not cache.is_file():
        sys.exit(f"rtcd: RTCD_BUILD_DIR={build} is not a CMake build tree (no CMakeCache.txt)")
    source = None
    for line in cache.read_text().splitlines():
        if line.startswith("rtcd_SOURCE_DIR:"):
            source = Path(line.split("=", 1)[1])
    include = (source or HERE.parent.parent) / "include"
    folders = {"rtcd": build, "rtcd_bullet": build / "bullet_plugin", "rtcd_import": build / "import"}
    libs = {}
    for name in LIBS:
        f = soname_file(folders[name], name)
        if f:
            libs[name] = f
    missing = [n for n in ("rtcd", "rtcd_bullet") if n not in libs]
    if missing:
        sys.exit(f"rtcd: no {', '.join('lib' + n + '.so' for n in missing)} in {build}: build it first "
                 f"(cmake --build {build})")
    return CLibs(include, libs)


def from_prefix(prefix: Path) -> CLibs:
    libs = {}
    for folder in [prefix / "lib", prefix / "lib64", *sorted((prefix / "lib").glob("*-linux-gnu*"))]:
        for name in LIBS:
            if name not in libs and folder.is_dir():
                f = soname_file(folder, name)
                if f:
                    libs[name] = f
    if "rtcd" not in libs or "rtcd_bullet" not in libs:
        sys.exit(f"rtcd: RTCD_PREFIX={prefix} holds no librtcd.so and librtcd_bullet.so")
    return CLibs(prefix / "include", libs)


def build_with_cmake() -> CLibs:
    root = HERE.parent.parent
    if not (root / "CMakeLists.txt").is_file() or not (root / "include" / "rtcd" / "rtcd.h").is_file():
        sys.exit("rtcd: not inside an rtcd checkout; set RTCD_BUILD_DIR (a CMake build) or RTCD_PREFIX (an install)")
    build = Path(os.environ.get("RTCD_CMAKE_BUILD_DIR", root / "build" / "python")).resolve()
    cmake = shutil.which("cmake")
    if not cmake:
        sys.exit("rtcd: cmake not found; run scripts/setup.sh, or set RTCD_BUILD_DIR / RTCD_PREFIX")
    print(f"rtcd: building librtcd with CMake in {build}", file=sys.stderr)
    subprocess.check_call([cmake, "-S", str(root), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                           "-DRTCD_BUILD_TESTS=OFF", "-DRTCD_BUILD_DEMOS=OFF"])
    targets = ["rtcd", "rtcd_bullet"]
    if (build / "import" / "Makefile").is_file() and "rtcd_import" in (build / "import" / "Makefile").read_text():
        targets.append("rtcd_import")
    jobs = str(os.cpu_count() or 1)
    subprocess.check_call([cmake, "--build", str(build), "-j", jobs, "--target", *targets])
    return from_build_dir(build)


def env_path(var: str) -> Optional[Path]:
    """An absolute path from the environment (pip builds in another folder: a relative one would mislead)."""
    value = os.environ.get(var)
    if not value:
        return None
    if not os.path.isabs(value):
        sys.exit(f"rtcd: {var}={value} must be an absolute path (e.g. {var}=$PWD/{value})")
    return Path(value).resolve()


def locate() -> CLibs:
    build, prefix = env_path("RTCD_BUILD_DIR"), env_path("RTCD_PREFIX")
    if build:
        return from_build_dir(build)
    if prefix:
        return from_prefix(prefix)
    return build_with_cmake()


class BuildExt(build_ext):
    """Finds (or builds) librtcd, generates the cffi C source, bundles the libraries."""

    def build_extension(self, ext: Extension) -> None:
        clibs = locate()
        with_import = "rtcd_import" in clibs.libraries
        lib_dirs = sorted({str(p.parent) for p in clibs.libraries.values()})
        link_args = ["-Wl,-rpath,$ORIGIN/_libs"]
        ffi = build_ffi.make_ffi([str(clibs.include_dir)], lib_dirs, with_import, extra_link_args=link_args)
        gen = Path(self.build_temp) / "_rtcd_cffi.c"
        gen.parent.mkdir(parents=True, exist_ok=True)
        ffi.emit_c_code(str(gen))
        ext.sources = [str(gen)]
        ext.include_dirs = [str(clibs.include_dir)]
        ext.library_dirs = lib_dirs
        ext.libraries = build_ffi.library_names(with_import)
        ext.extra_link_args = link_args
        super().build_extension(ext)
        # the libraries beside the module, under the names the loader looks for
        libs_dir = Path(self.get_ext_fullpath(ext.name)).parent / "_libs"
        if libs_dir.exists():
            shutil.rmtree(libs_dir)
        libs_dir.mkdir(parents=True)
        for path in clibs.libraries.values():
            shutil.copy2(path, libs_dir / path.name)  # follows the soname link to the real file
        print(f"rtcd: bundled {', '.join(sorted(p.name for p in clibs.libraries.values()))} "
              f"(headers {clibs.include_dir})", file=sys.stderr)


setup(
    ext_modules=[Extension(build_ffi.MODULE, sources=[])],
    cmdclass={"build_ext": BuildExt},
)
