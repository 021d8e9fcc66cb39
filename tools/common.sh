# Shared by tools/*.sh: the repository root, the packages (installed first, so that
# everything below sees the machine as it will be), and an mpiexec command line that
# works as root and with more ranks than cores (Open MPI refuses both by default).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/tools/bootstrap.sh"
mpiexec_cmd=(mpiexec)
if mpiexec --version 2>/dev/null | grep -qE "Open MPI|OpenRTE"; then
  mpiexec_cmd+=(--oversubscribe --bind-to none)  # unpinned: a rank's OpenMP threads may use every core
  [ "$(id -u)" -eq 0 ] && mpiexec_cmd+=(--allow-run-as-root)
fi
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
# OpenBLAS older than the CPU falls back to its SSE3 kernels; name the ones the CPU can run.
openblas_coretype="$("$root/tools/openblas-coretype.sh")"
if [ -n "$openblas_coretype" ]; then export OPENBLAS_CORETYPE="$openblas_coretype"; fi
