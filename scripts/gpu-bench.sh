#!/usr/bin/env bash
# The GPU check: builds the CUDA backend for one architecture, then in one
# run measures agentrl on the GPU against the CPU and against PyTorch:
#
#   1. parity: log-probabilities on the GPU against the CPU, for the built-in
#      small model (F32) and a Qwen2.5-0.5B-shaped model (BF16)
#   2. LoRA training tokens/s on the 0.5B shape (agentrl bench train), and
#      where a step's time goes, by operation (two more steps, node by node)
#   3. the same LoRA step in PyTorch + peft (transformers' Qwen2ForCausalLM
#      with the same shape, random weights, BF16)
#   4. a whole GRPO run (agentrl train grpo --gpu: warm start, rollouts,
#      updates, hand-overs) on the math environment, on the GPU and on the
#      CPU, with the importance ratio that shows whether the GPU's sampling
#      and training log-probabilities agree
#   5. inference throughput at 1, 32 and 128 sequences (agentrl bench infer)
#   6. transformers' generate throughput at 32 sequences
#   and prints the ratios agentrl / PyTorch and the model FLOP utilisation
#   against 790 TFLOP/s (an H200's dense BF16 rate).
#
# It needs no Go and no network: `make gpu-bundle` prepares gpu/ with the
# agentrl binary, the model maker, the ggml sources and these scripts; on
# the GPU machine (nvcc, CMake, python3 with torch, transformers and peft):
#
#   gpu/scripts/gpu-bench.sh
#
# Without an NVIDIA GPU (no nvidia-smi, or --dry-run) it is a dry run: it
# runs every step that needs no GPU, on the CPU at reduced sizes, and says
# "no NVIDIA GPU: skipped ..." for the others. Everything it prints also
# goes to $OUT/gpu-bench.txt when OUT is set, with the JSON results in
# $OUT/gpu-bench/. It exits non-zero when a check failed or a target was
# missed. docs/gpu.md describes the measurements.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
	cat <<'EOF'
usage: gpu-bench.sh [options]

  --dry-run          CPU steps only, at reduced sizes (the default without
                     nvidia-smi or without a GPU it lists)
  --bin FILE         agentrl binary (default: bin/agentrl beside the scripts)
  --shapedmodel FILE the model maker (default: bin/shapedmodel, else built
                     with go from scripts/shapedmodel)
  --ggml DIR         ggml sources (default: ggml/ beside the scripts, else the
                     pinned module through go)
  --cuda-arch LIST   CUDA architectures to build (default: 90, the H100/H200)
  --lib-dir DIR      where the CUDA backend is installed and loaded from
                     (default: lib/agentrl beside the scripts)
  --build-dir DIR    CMake build folder (default: out/ggml-cuda)
  --skip-build       use the backend already in --lib-dir
  --only-build       build the backend and stop
  --work DIR         models and intermediate results (default: a temporary
                     folder, removed at the end)
EOF
}

bin="$root/bin/agentrl"
shapedmodel="$root/bin/shapedmodel"
ggml_dir=""
[ -d "$root/ggml/src" ] && ggml_dir="$root/ggml"
cuda_arch=90
lib_dir="$root/lib/agentrl"
build_dir=""
work=""
dry_run=""
skip_build=""
only_build=""

while [ $# -gt 0 ]; do
	case "$1" in
	--dry-run) dry_run=1; shift ;;
	--bin) bin="${2:?--bin needs a value}"; shift 2 ;;
	--shapedmodel) shapedmodel="${2:?--shapedmodel needs a value}"; shift 2 ;;
	--ggml) ggml_dir="${2:?--ggml needs a value}"; shift 2 ;;
	--cuda-arch) cuda_arch="${2:?--cuda-arch needs a value}"; shift 2 ;;
	--lib-dir) lib_dir="${2:?--lib-dir needs a value}"; shift 2 ;;
	--build-dir) build_dir="${2:?--build-dir needs a value}"; shift 2 ;;
	--skip-build) skip_build=1; shift ;;
	--only-build) only_build=1; shift ;;
	--work) work="${2:?--work needs a value}"; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; echo "gpu-bench: unknown argument $1" >&2; exit 2 ;;
	esac
done

python=${PYTHON:-python3}
helper="$root/scripts/gpu_bench.py"
failures=()
skipped=()

section() { printf '\n== %s ==\n' "$*"; }
fail() {
	echo "FAIL: $*"
	failures+=("$*")
}
# skip_gpu notes a step that needs the GPU in a dry run.
skip_gpu() {
	echo "no NVIDIA GPU: skipped $*"
	skipped+=("$*")
}
not_available() {
	echo "not available: $*"
	skipped+=("$*")
}
# run_timed runs a command and prints its wall time on stderr, so that a
# command whose stdout is a result file keeps that file clean.
run_timed() {
	local start=$SECONDS rc
	"$@"
	rc=$?
	if [ $rc -eq 124 ]; then
		echo "  (stopped after $((SECONDS - start)) s: the step's time limit)" >&2
	else
		echo "  ($((SECONDS - start)) s)" >&2
	fi
	return $rc
}
# cpu_agentrl runs agentrl with no GPU backend at all: the CPU reference;
# gpu_agentrl with the CUDA backend. Both stop after $limit seconds when a
# step sets it (a slow step must not take the time of the ones after it).
cpu_agentrl() { AGENTRL_LIB_DIR="$work/no-backends" timeout "${limit:-0}" "$bin" "$@"; }
gpu_agentrl() { AGENTRL_LIB_DIR="$lib_dir" timeout "${limit:-0}" "$bin" "$@"; }

environment() {
	section "environment"
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //') ($(nproc) threads)"
	if [ -n "$gpu" ]; then
		nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader | sed 's/^/gpu: /'
	fi
	if command -v nvcc >/dev/null; then
		echo "nvcc: $(nvcc --version | grep -i release | sed 's/.*release/release/')"
	else
		echo "nvcc: not found"
	fi
	echo "cmake: $(cmake --version 2>/dev/null | head -1 || echo not found)"
	echo "python: $($python --version 2>&1)"
	"$python" "$helper" deps | sed 's/^/  /'
	torch_ready=""
	if [ -n "$gpu" ]; then
		"$python" "$helper" deps --need-cuda >/dev/null 2>&1 && torch_ready=1
	else
		"$python" "$helper" deps >/dev/null 2>&1 && torch_ready=1
	fi
	if ! "$bin" version; then
		echo "gpu-bench: $bin does not run here; its shared libraries:" >&2
		ldd "$bin" >&2
		return 1
	fi
}

build_backend() {
	section "CUDA backend (architectures $cuda_arch)"
	if [ -n "$skip_build" ]; then
		if [ -f "$lib_dir/libggml-cuda.so" ]; then
			echo "using $lib_dir/libggml-cuda.so (--skip-build)"
		else
			fail "--skip-build: no $lib_dir/libggml-cuda.so"
		fi
		return
	fi
	if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
		if [ -n "$gpu" ]; then
			fail "nvcc not found: cannot build the CUDA backend"
		else
			not_available "the CUDA backend build (nvcc not found)"
		fi
		return
	fi
	local args=(--backend cuda --cuda-arch "$cuda_arch" --lib-dir "$lib_dir")
	[ -n "$ggml_dir" ] && args+=(--ggml "$ggml_dir")
	[ -n "$build_dir" ] && args+=(--build-dir "$build_dir")
	# Ninja's progress lines would be most of the output.
	if ! run_timed "$root/scripts/build-ggml-backend.sh" "${args[@]}" 2>&1 | grep -v '^\[[0-9]*/[0-9]*\] Building'; then
		fail "the CUDA backend build"
	fi
}

check_devices() {
	section "devices"
	if [ -z "$gpu" ]; then
		cpu_agentrl version --json >"$work/version.json" && "$python" -c '
import json, sys
for d in json.load(open(sys.argv[1]))["devices"]:
    print("  %(name)s %(type)s %(description)s (%(backend)s backend)" % d)' "$work/version.json"
		skip_gpu "the check that agentrl lists a CUDA device"
		return
	fi
	gpu_agentrl version --json >"$work/version.json" || { fail "agentrl version"; return; }
	if "$python" -c '
import json, sys
devices = json.load(open(sys.argv[1]))["devices"]
for d in devices:
    print("  %(name)s %(type)s %(description)s (%(backend)s backend, %(memory_total)d bytes)" % d)
sys.exit(0 if any(d["backend"] == "CUDA" and d["type"] == "gpu" for d in devices) else 1)' "$work/version.json"; then
		echo "agentrl loads the CUDA backend from $lib_dir"
	else
		fail "agentrl did not load a CUDA device from $lib_dir"
		echo "libraries libggml-cuda.so cannot find:"
		ldd "$lib_dir/libggml-cuda.so" | grep 'not found'
		echo "ggml's own loader error:"
		GGML_BACKEND_PATH="$lib_dir/libggml-cuda.so" "$bin" --verbose version 2>&1 | grep -i 'load' | head -5
	fi
}

make_models() {
	section "models"
	if "$bin" init-model --preset small --seed 1 --out "$work/small.gguf" >"$work/small.txt"; then
		head -3 "$work/small.txt"
	else
		fail "init-model"
	fi
	local shape_args=()
	if [ -z "$gpu" ]; then
		# The dry run checks the plumbing, not the speed: two blocks and a
		# small vocabulary keep the CPU steps short.
		shape_args=(--layers 2 --vocab 8192)
		echo "dry run: the Qwen2.5-0.5B shape reduced to 2 layers and 8192 tokens"
	fi
	if [ ! -x "$shapedmodel" ]; then
		if command -v go >/dev/null && [ -d "$root/scripts/shapedmodel" ]; then
			(cd "$root" && CGO_ENABLED=0 go build -o "$work/shapedmodel" ./scripts/shapedmodel) || fail "build scripts/shapedmodel"
			shapedmodel="$work/shapedmodel"
		else
			fail "no model maker at $shapedmodel (make gpu-bundle builds it)"
			return
		fi
	fi
	"$shapedmodel" --out "$work/shape.gguf" --type bf16 --seed 1 "${shape_args[@]}" >"$work/shape.json" || { fail "shapedmodel"; return; }
	"$python" -c '
import json, sys
s = json.load(open(sys.argv[1]))
print("0.5B shape: %(parameters)d parameters, %(layers)d layers, embedding %(embedding_length)d, %(head_count)d heads (%(head_count_kv)d KV), feed-forward %(feed_forward_length)d, vocabulary %(vocab_size)d, %(type)s" % s)' "$work/shape.json"
}

# Prompt and continuations scored for parity (no commas: the flag splits on them).
parity_prompt="You are in the middle of a room. Looking quickly around you you see a cabinet 1 and a countertop 1. Your task is to: put a clean apple in the fridge."
parity_continuations=(" Action: go to countertop 1" " Action: take apple 1 from countertop 1" " Thought: I need to find the fridge first.")

parity() {
	section "parity: log-probabilities on the GPU against the CPU"
	local model tol label conts=()
	for c in "${parity_continuations[@]}"; do conts+=(--continuation "$c"); done
	for spec in "small:1e-2:small (F32)" "shape:5e-2:0.5B shape (BF16)"; do
		model=${spec%%:*}
		tol=$(echo "$spec" | cut -d: -f2)
		label=${spec#*:*:}
		[ -f "$work/$model.gguf" ] || continue
		if ! cpu_agentrl score --model "$work/$model.gguf" --gpu-layers 0 "${cpu_threads[@]}" --prompt "$parity_prompt" "${conts[@]}" --json >"$work/parity-$model-cpu.json"; then
			fail "CPU log-probabilities of $label"
			continue
		fi
		if [ -z "$gpu" ]; then
			echo "CPU log-probabilities of $label: $("$python" -c 'import json,sys; s=json.load(open(sys.argv[1]))["scores"]; print(sum(len(x["tokens"]) for x in s), "tokens")' "$work/parity-$model-cpu.json")"
			skip_gpu "GPU log-probabilities of $label"
			continue
		fi
		if ! gpu_agentrl score --model "$work/$model.gguf" --gpu-layers -1 --prompt "$parity_prompt" "${conts[@]}" --json >"$work/parity-$model-gpu.json"; then
			fail "GPU log-probabilities of $label"
			continue
		fi
		"$python" "$helper" parity --label "$label" --tol "$tol" "$work/parity-$model-cpu.json" "$work/parity-$model-gpu.json" || fail "parity of $label"
	done
}

inference() {
	section "inference throughput (agentrl bench infer)"
	[ -f "$work/shape.gguf" ] || { fail "no models to benchmark"; return; }
	local run=gpu_agentrl where=GPU limit=$step_limit
	if [ -z "$gpu" ]; then
		skip_gpu "inference on the GPU; measuring the CPU at reduced sizes"
		run=cpu_agentrl where="CPU, dry run"
	fi
	if ! run_timed "$run" bench infer --model "$work/small.gguf" --model "$work/shape.gguf" --parallel "$infer_parallel" \
		--prompt-tokens "$infer_prompt" --gen-tokens "$infer_gen" --repeats "$infer_repeats" "${cpu_threads[@]}" --json >"$work/infer.json"; then
		fail "agentrl bench infer"
		return
	fi
	"$python" "$helper" infer-table --label "$where, $infer_prompt prompt + $infer_gen generated tokens per sequence" "$work/infer.json"
	# The comparison with transformers uses the 0.5B shape alone.
	"$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
r["models"] = [m for m in r["models"] if m["model"].get("path", "").endswith("shape.gguf")]
json.dump(r, open(sys.argv[2], "w"))' "$work/infer.json" "$work/infer-shape.json"
}

train_ours() {
	section "LoRA training: agentrl bench train"
	local help
	if ! help=$("$bin" bench train --help 2>&1); then
		not_available "agentrl LoRA training benchmark (this agentrl has no 'bench train' command)"
		return
	fi
	# Pass the flags 'bench train' has: it is younger than this script.
	has_flag() { grep -qE -- "^[[:space:]]+--$1([[:space:],]|$)" <<<"$help"; }
	local args=(bench train --json)
	if [ -z "$gpu" ]; then
		skip_gpu "agentrl training on the GPU; running 'bench train' on the CPU at reduced sizes"
		has_flag threads && args+=("${cpu_threads[@]}")
	elif has_flag device; then
		args+=(--device gpu)
	elif has_flag gpu; then
		args+=(--gpu)
	else
		not_available "agentrl LoRA training on the GPU ('bench train' has neither --device nor --gpu)"
		return
	fi
	has_flag model && args+=(--model "$work/shape.gguf")
	if has_flag shapes; then
		args+=(--shapes "${train_batch}x${train_seq}")
	else
		has_flag batch && args+=(--batch "$train_batch")
		has_flag seq-len && args+=(--seq-len "$train_seq")
	fi
	has_flag rank && args+=(--rank "$train_rank")
	# Its steps include the warm-up ones.
	has_flag steps && args+=(--steps "$((train_steps + train_warmup))")
	has_flag warmup && args+=(--warmup "$train_warmup")
	has_flag profile-steps && args+=(--profile-steps 2)
	# Its own PyTorch peer is plain torch in F32; the reference here is
	# transformers + peft in BF16 (next step).
	has_flag torch-script && args+=(--torch-script "")
	echo "agentrl$(printf ' %q' "${args[@]}")"
	local limit=$step_limit
	if ! run_timed gpu_agentrl "${args[@]}" >"$work/train-ours-raw.json"; then
		fail "agentrl bench train"
		return
	fi
	local check=()
	[ -n "$gpu" ] && check=(--want-gpu)
	"$python" "$helper" ours-train "${check[@]}" "$work/train-ours-raw.json" --out "$work/train-ours.json" || fail "agentrl bench train's result"
}

train_torch() {
	section "LoRA training: PyTorch + peft (transformers Qwen2ForCausalLM)"
	if [ -z "$torch_ready" ]; then
		not_available "the PyTorch + peft training reference (needs torch, transformers and peft; see above)"
		return
	fi
	[ -z "$gpu" ] && skip_gpu "PyTorch training on the GPU; running it on the CPU at reduced sizes"
	run_timed timeout "$step_limit" "$python" "$helper" torch-train --device "$torch_device" --shape "$work/shape.json" --batch "$train_batch" \
		--seq-len "$train_seq" --steps "$train_steps" --warmup "$train_warmup" --rank "$train_rank" \
		--out "$work/train-torch.json" || fail "PyTorch training"
}

generate_torch() {
	section "inference: transformers generate at $compare_parallel sequences"
	if [ -z "$torch_ready" ]; then
		not_available "the transformers generate reference (needs torch and transformers; see above)"
		return
	fi
	[ -z "$gpu" ] && skip_gpu "transformers generate on the GPU; running it on the CPU at reduced sizes"
	run_timed timeout "$step_limit" "$python" "$helper" torch-generate --device "$torch_device" --shape "$work/shape.json" --parallel "$compare_parallel" \
		--prompt-tokens "$infer_prompt" --gen-tokens "$infer_gen" --repeats "$generate_repeats" \
		--out "$work/generate-torch.json" || fail "transformers generate"
}

# rl_run trains GRPO for a few iterations with one model on one device and
# prints its iterations; the rest of the flags are the run's.
rl_run() {
	local label=$1 run=$2 model=$3 dir=$4 limit=$step_limit
	shift 4
	if ! run_timed "$run" train grpo --env math --model "$work/$model.gguf" --out "$work/$dir" --seed 1 \
		--set rollout.tasks="$rl_tasks" --set rollout.parallel=32 --set eval.every=0 "$@" >"$work/$dir.log" 2>&1; then
		tail -5 "$work/$dir.log"
		fail "agentrl train grpo ($label)"
		return
	fi
	grep '^warm start' "$work/$dir.log" | sed 's/^/  /'
	cp "$work/$dir/metrics.jsonl" "$work/$dir-metrics.json"
	"$python" "$helper" rl-table --label "$label" "$work/$dir/metrics.jsonl" || fail "the GRPO run's metrics ($label)"
}

rl() {
	section "RL: agentrl train grpo on math (warm start, $rl_iterations iterations of $rl_tasks tasks x 4)"
	[ -f "$work/small.gguf" ] || { fail "no model for the GRPO run"; return; }
	rl_run "small (F32), CPU" cpu_agentrl small rl-small-cpu --iterations "$rl_iterations" "${rl_cpu_args[@]}"
	if [ -z "$gpu" ]; then
		skip_gpu "GRPO on the GPU"
		return
	fi
	rl_run "small (F32), GPU" gpu_agentrl small rl-small-gpu --iterations "$rl_iterations" --gpu
	rl_run "0.5B shape (BF16), GPU" gpu_agentrl shape rl-shape-gpu --iterations "$rl_iterations" --gpu
}

summary() {
	section "summary"
	[ -f "$work/shape.json" ] || return
	local args=(--shape "$work/shape.json" --parallel "$compare_parallel" --batch "$train_batch" --seq-len "$train_seq" --rank "$train_rank")
	[ -f "$work/train-ours.json" ] && args+=(--ours-train "$work/train-ours.json")
	[ -f "$work/train-torch.json" ] && args+=(--torch-train "$work/train-torch.json")
	[ -f "$work/infer-shape.json" ] && args+=(--ours-infer "$work/infer-shape.json")
	[ -f "$work/generate-torch.json" ] && args+=(--torch-generate "$work/generate-torch.json")
	if [ -z "$gpu" ]; then
		echo "dry run: CPU figures at reduced sizes, not comparable with the GPU targets"
		"$python" "$helper" summary "${args[@]}"
		return
	fi
	"$python" "$helper" summary "${args[@]}" || fail "a target was missed"
}

main() {
	gpu=""
	if [ -z "$dry_run" ] && command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
		gpu=1
	fi
	echo "agentrl GPU check: $([ -n "$gpu" ] && echo "on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" || echo "dry run, no NVIDIA GPU: CPU steps only, at reduced sizes")"

	# The workload, the same for agentrl and PyTorch: a comparison is only
	# fair at identical shapes. The dry run shrinks it to check the plumbing
	# in seconds, and runs ggml on one CPU thread (its threads spin while
	# they wait for each other, which on a busy machine costs 30x).
	train_rank=8
	# Each measuring step stops after this many seconds.
	step_limit=180
	if [ -n "$gpu" ]; then
		infer_parallel=1,32,128 infer_prompt=64 infer_gen=128 infer_repeats=2 compare_parallel=32 generate_repeats=3
		train_batch=8 train_seq=1024 train_steps=10 train_warmup=3
		torch_device=cuda cpu_threads=()
		rl_iterations=3 rl_tasks=16 rl_cpu_args=()
	else
		infer_parallel=1,4 infer_prompt=16 infer_gen=8 infer_repeats=1 compare_parallel=4 generate_repeats=1
		train_batch=1 train_seq=32 train_steps=1 train_warmup=1
		torch_device=cpu cpu_threads=(--threads 1)
		rl_iterations=1 rl_tasks=2 rl_cpu_args=(--threads 1 --set warm_start.demos=8)
	fi

	[ -x "$bin" ] || { echo "gpu-bench: no agentrl binary at $bin (make gpu-bundle, or --bin FILE)"; return 1; }
	command -v "$python" >/dev/null || { echo "gpu-bench: $python not found"; return 1; }
	if [ -z "$work" ]; then
		work=$(mktemp -d "${TMPDIR:-/tmp}/agentrl-gpu-bench.XXXXXX")
		# shellcheck disable=SC2064 # the folder is fixed now
		trap "rm -rf '$work'" EXIT
	fi
	mkdir -p "$work/no-backends"

	environment || return 1
	build_backend
	if [ -n "$only_build" ]; then
		[ ${#failures[@]} -eq 0 ]
		return
	fi
	check_devices
	make_models
	parity
	train_ours
	train_torch
	rl
	inference
	generate_torch
	summary

	if [ -n "${OUT:-}" ]; then
		mkdir -p "$OUT/gpu-bench"
		cp "$work"/*.json "$OUT/gpu-bench/" 2>/dev/null
	fi

	section "result"
	for s in "${skipped[@]}"; do echo "skipped: $s"; done
	for f in "${failures[@]}"; do echo "failed: $f"; done
	if [ ${#failures[@]} -gt 0 ]; then
		echo "gpu-bench: ${#failures[@]} check(s) failed"
		return 1
	fi
	echo "gpu-bench: all checks that could run passed"
}

if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	main 2>&1 | tee "$OUT/gpu-bench.txt"
	exit "${PIPESTATUS[0]}"
fi
main 2>&1
