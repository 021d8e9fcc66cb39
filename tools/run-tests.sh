#!/usr/bin/env bash
# The whole test suite from a fresh machine: packages, configure, build, ctest.
# Extra arguments go to ctest (e.g. -R build, -L np4).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"
cmake --preset dev
cmake --build --preset dev
ctest --preset dev "$@"
