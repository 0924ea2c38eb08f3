#!/usr/bin/env bash
# Installs every Debian package rtcd needs. Idempotent: does nothing (and
# needs no network) when all of them are present.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git
  libbullet-dev            # Bullet Physics (pkg-config: bullet)
  ocl-icd-opencl-dev opencl-headers clinfo  # OpenCL ICD loader and headers
  pocl-opencl-icd          # PoCL: the CPU OpenCL device (used when no GPU is present)
  libcmocka-dev            # unit tests
  libembree-dev            # Intel Embree: the reference in the ray benchmark
  libassimp-dev            # assimp: model files for rtcd_import and rtcd_mesh_check (optional)
  assimp-testmodels        # assimp's model corpus: bench_import and test_import's corpus check
  libopenvdb-dev libboost-dev # OpenVDB: the watertight wrap of open meshes (rtcd_wrap.h; optional)
  clang libclang-rt-14-dev # libFuzzer: the bounded fuzz run of the sanitizer variant (tests/fuzz)
  python3-venv python3-dev # the Python bindings (bindings/python) and the plots, in build/venv
  libglfw3-dev libgl-dev   # the demos' --view window (GLFW and OpenGL)
  libosmesa6-dev libpng-dev # the demos' --frames: off-screen OpenGL (OSMesa) and PNG files
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
