#!/usr/bin/env bash
# Sets up, builds and runs the main demo. Extra arguments go to the demo.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" release
exec "$root/build/release/demos/avalanche" "$@"
