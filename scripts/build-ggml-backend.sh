#!/usr/bin/env bash
# Builds a ggml backend library that agentrl loads at run time, from the
# ggml sources of the pinned github.com/ollama/ollama module, and installs
# it with the shared ggml-base it links against:
#
#   scripts/build-ggml-backend.sh                 # CUDA backend into lib/agentrl
#   scripts/build-ggml-backend.sh --cuda-arch 90  # for one architecture only
#   scripts/build-ggml-backend.sh --backend cpu --lib-dir /tmp/x   # loader test
#
# `make cuda` calls it. Needs CMake 3.21+, a C/C++ compiler and, for CUDA,
# nvcc (CUDA 12); uses Ninja when present. docs/gpu.md explains the design.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: build-ggml-backend.sh [options]

  --backend NAME     cuda (default), or cpu: a CPU backend library, only
                     useful to test that agentrl loads backend libraries
  --ggml DIR         ggml source tree (default: ml/backend/ggml/ggml of the
                     github.com/ollama/ollama module in go.mod, via `go list`)
  --cuda-arch LIST   CMAKE_CUDA_ARCHITECTURES, e.g. "90" or "80-real;90"
                     (default: $CUDA_ARCHITECTURES, else the local GPUs'
                     compute capabilities from nvidia-smi, else
                     80-real;86-real;89-real;90)
  --build-dir DIR    CMake build folder (default: out/ggml-NAME)
  --lib-dir DIR      where to install the libraries (default: lib/agentrl,
                     which bin/agentrl searches as <exe dir>/../lib/agentrl)
  --jobs N           parallel compile jobs (default: the number of CPUs)
EOF
}

die() {
	echo "build-ggml-backend: $*" >&2
	exit 1
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
backend=cuda
ggml_dir=""
cuda_arch="${CUDA_ARCHITECTURES:-}"
build_dir=""
lib_dir="$root/lib/agentrl"
jobs=$(nproc 2>/dev/null || echo 2)

while [ $# -gt 0 ]; do
	case "$1" in
	--backend) backend="${2:?--backend needs a value}"; shift 2 ;;
	--ggml) ggml_dir="${2:?--ggml needs a value}"; shift 2 ;;
	--cuda-arch) cuda_arch="${2:?--cuda-arch needs a value}"; shift 2 ;;
	--build-dir) build_dir="${2:?--build-dir needs a value}"; shift 2 ;;
	--lib-dir) lib_dir="${2:?--lib-dir needs a value}"; shift 2 ;;
	--jobs) jobs="${2:?--jobs needs a value}"; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument $1" ;;
	esac
done
case "$backend" in
cuda | cpu) ;;
*) die "--backend $backend: want cuda or cpu" ;;
esac
build_dir="${build_dir:-$root/out/ggml-$backend}"

# The tools first, so that a machine without them fails in a second.
if [ "$backend" = cuda ]; then
	nvcc="${CUDACXX:-}"
	if [ -z "$nvcc" ]; then
		nvcc=$(command -v nvcc || true)
	fi
	if [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
		nvcc=/usr/local/cuda/bin/nvcc
	fi
	if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
		die "nvcc (the CUDA compiler) not found${CUDACXX:+ at CUDACXX=$CUDACXX}: install the CUDA toolkit 12.x and put its bin folder on PATH, or set CUDACXX=/path/to/nvcc. Without the CUDA backend agentrl runs on the CPU; Dockerfile.cuda builds it in a container (make docker-cuda)."
	fi
	export CUDACXX="$nvcc"
fi
command -v cmake >/dev/null || die "cmake not found: install CMake 3.21 or newer"

if [ -z "$ggml_dir" ]; then
	command -v go >/dev/null || die "go not found: pass --ggml DIR (ml/backend/ggml/ggml of github.com/ollama/ollama)"
	(cd "$root" && go mod download github.com/ollama/ollama) || die "cannot download the module github.com/ollama/ollama"
	module_dir=$(cd "$root" && go list -m -f '{{.Dir}}' github.com/ollama/ollama)
	ggml_dir="$module_dir/ml/backend/ggml/ggml"
fi
[ -f "$ggml_dir/src/ggml-backend-reg.cpp" ] || die "$ggml_dir is not a ggml source tree (no src/ggml-backend-reg.cpp)"

[ "$backend" = cuda ] || cuda_arch=""
cmake_args=(-DGGML_SOURCE_DIR="$ggml_dir" -DAGENTRL_BACKEND="$backend" -DCMAKE_BUILD_TYPE=Release)
if [ "$backend" = cuda ]; then
	if [ -z "$cuda_arch" ] && command -v nvidia-smi >/dev/null; then
		# "9.0" -> "90", one entry per distinct GPU model.
		cuda_arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | grep -E '^[0-9]+$' | sort -u | paste -sd';' || true)
	fi
	# Machine code for the data-centre and desktop GPUs of the last three
	# generations, and PTX of the newest so that later GPUs compile it at
	# load time.
	cuda_arch="${cuda_arch:-80-real;86-real;89-real;90}"
	cmake_args+=(-DCMAKE_CUDA_ARCHITECTURES="$cuda_arch")
fi

generator="Unix Makefiles"
if command -v ninja >/dev/null; then
	generator=Ninja
fi
# CMake refuses to switch the generator of an existing build folder.
if [ -f "$build_dir/CMakeCache.txt" ] && ! grep -qx "CMAKE_GENERATOR:INTERNAL=$generator" "$build_dir/CMakeCache.txt"; then
	rm -rf "$build_dir"
fi

echo "build-ggml-backend: $backend backend from $ggml_dir${cuda_arch:+, CUDA architectures $cuda_arch}" >&2
start=$(date +%s)
cmake -S "$root/scripts/ggml-backend" -B "$build_dir" -G "$generator" "${cmake_args[@]}" >&2
cmake --build "$build_dir" --target "ggml-$backend" --parallel "$jobs" >&2

# Install: the backend module under the name ggml's loader looks for
# (libggml-NAME.so), and ggml-base under its soname. Each file is replaced
# by a rename so that running processes keep the library they mapped.
mkdir -p "$lib_dir"
install_lib() {
	install -m 0755 "$1" "$lib_dir/.$2.tmp"
	mv -f "$lib_dir/.$2.tmp" "$lib_dir/$2"
}
base_soname=$(objdump -p "$build_dir/lib/libggml-base.so" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
install_lib "$build_dir/lib/libggml-$backend.so" "libggml-$backend.so"
install_lib "$(readlink -f "$build_dir/lib/libggml-base.so")" "${base_soname:-libggml-base.so.0}"

echo "build-ggml-backend: installed libggml-$backend.so and ${base_soname:-libggml-base.so.0} in $lib_dir ($(($(date +%s) - start)) s)" >&2
missing=$(ldd "$lib_dir/libggml-$backend.so" 2>/dev/null | awk '/not found/ { print $1 }' | paste -sd' ' || true)
if [ -n "$missing" ]; then
	echo "build-ggml-backend: warning: on this machine libggml-$backend.so cannot find $missing; agentrl will skip the backend here (libcuda.so.1 comes with the NVIDIA driver)" >&2
fi
