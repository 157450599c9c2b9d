#!/bin/sh
# Installs the independent Python references used by `agentrl bench reference`
# (bench/peers/hf_reference.py): PyTorch, transformers, peft and gguf, plus trl
# for the comparison against TRL's trainers. Everything comes from the Python
# package index through pip, into a virtual environment at .venv-peers/ in the
# repository root (git-ignored), so the system Python stays untouched.
#
# PyPI's Linux torch wheel is the CUDA build and depends on NVIDIA's runtime
# packages (the environment is about 6 GB); the CPU-only wheels are on
# PyTorch's own index, which this script does not use. The references run on
# the CPU either way.
#
# Idempotent: a second run finds the pinned versions and only says so.
# Environment: PYTHON (the interpreter that creates the environment, default
# python3), VENV (its directory, default .venv-peers in the repository root).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
venv=${VENV:-$root/.venv-peers}
python=${PYTHON:-python3}

# Pinned together: these versions install side by side and were the ones the
# figures in docs/results/reference.md were measured with.
requirements="torch==2.15.0 transformers==5.23.0 peft==0.21.2 gguf==0.19.0 trl==1.16.0"

say() { echo "install-peers: $*" >&2; }

if ! command -v "$python" >/dev/null 2>&1; then
	say "$python not found; install Python 3.10 or newer (Debian: apt-get install python3 python3-venv)"
	exit 1
fi
if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
	say "$python has no venv/ensurepip module (Debian: apt-get install python3-venv)"
	exit 1
fi

if [ ! -x "$venv/bin/python" ]; then
	say "creating virtual environment $venv"
	"$python" -m venv "$venv"
fi

# The check imports nothing heavy: pip's metadata tells whether the pins hold.
if "$venv/bin/python" - $requirements <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version, PackageNotFoundError
for req in sys.argv[1:]:
    name, want = req.split("==")
    try:
        if version(name) != want:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
then
	say "already installed in $venv: $requirements"
	exit 0
fi

say "installing $requirements (torch with its CUDA runtime wheels is several GB)"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# shellcheck disable=SC2086 # word splitting of the requirement list is intended
"$venv/bin/python" -m pip install --quiet $requirements
say "installed in $venv; run: bin/agentrl bench reference --python $venv/bin/python"
