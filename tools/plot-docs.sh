#!/usr/bin/env bash
# Redraws docs/figures/*.svg from the JSON lines in bench/results/ (bench/plot_docs.py), installing
# Debian's python3-matplotlib first if it is missing (only then; needs root or sudo). Run it whenever
# a results file behind a docs table changes; unchanged results give byte-identical SVGs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian's package installs for /usr/bin/python3; a python3 earlier on PATH (pyenv, a venv) may
# not see it, so that interpreter is used only when it already has matplotlib.
python=/usr/bin/python3
if ! "$python" -c "import matplotlib" 2>/dev/null; then
  if command -v python3 >/dev/null && python3 -c "import matplotlib" 2>/dev/null; then
    python=python3
  elif ! dpkg-query -W -f='${Status}' python3-matplotlib 2>/dev/null | grep -q "install ok installed"; then
    echo "plot-docs: installing python3-matplotlib"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
      command -v sudo >/dev/null || { echo "plot-docs: need root or sudo to install python3-matplotlib" >&2; exit 1; }
      sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends python3-matplotlib
  fi
fi
exec "$python" "$root/bench/plot_docs.py"
