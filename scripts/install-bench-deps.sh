#!/bin/sh
# Installs what `agentrl bench train` needs for its PyTorch reference
# (bench/peers/torch_lora.py) on a Debian or Ubuntu machine: Debian's
# PyTorch and NumPy, and OpenBLAS. Without libopenblas0-pthread Debian's
# torch falls back to the reference BLAS and runs about 10x slower, which
# would make the comparison meaningless.
#
# Idempotent: prints nothing and changes nothing when all is installed.
# Needs root (or sudo) only when something is missing.
set -eu

packages="python3 python3-numpy python3-torch libopenblas0-pthread"

missing=""
for p in $packages; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-bench-deps: apt-get not found; install by hand:$missing" >&2
	exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo"
else
	echo "install-bench-deps: need root to install:$missing" >&2
	exit 1
fi

echo "install-bench-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the package list is intended
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
