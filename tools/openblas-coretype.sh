#!/usr/bin/env bash
# Prints the OPENBLAS_CORETYPE this machine needs, or nothing when OpenBLAS's own choice is right.
# An OpenBLAS release older than the CPU does not recognise it and falls back to its Prescott
# (SSE3) kernels: 4x slower DGEMM on an AVX-512 Xeon with Debian 12's OpenBLAS 0.3.21
# (include/tessera/kernels/host_blas.hpp, which tessera's programs use to say so). The choice is
# made when the library loads, so scripts set the variable before they start anything:
#   coretype="$(tools/openblas-coretype.sh)"; [ -n "$coretype" ] && export OPENBLAS_CORETYPE="$coretype"
# A variable the user set wins (then this prints nothing).
set -uo pipefail
[ -n "${OPENBLAS_CORETYPE:-}" ] && exit 0
command -v python3 >/dev/null || exit 0
core="$(python3 - 2>/dev/null <<'PY'
import ctypes
lib = ctypes.CDLL("libopenblas.so.0")
lib.openblas_get_corename.restype = ctypes.c_char_p
print(lib.openblas_get_corename().decode())
PY
)" || exit 0
[ "${core,,}" = prescott ] || exit 0
flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has() { [[ "$flags" == *" $1 "* ]]; }
if has avx512f && has avx512dq && has avx512bw && has avx512vl; then echo SkylakeX
elif has avx2 && has fma; then echo Haswell
fi
