#!/bin/sh
# The starting line for the RL algorithms: SmolLM2-135M-Instruct on every
# built-in environment, zero-shot and after LoRA SFT on expert
# demonstrations, evaluated on the test split (greedy).
#
#   scripts/smollm2-baseline.sh [OUT]          (default OUT: baseline/)
#
# Resumable: every step writes its own file in OUT/<env>/ and is skipped
# when that file exists, so an interrupted run continues where it stopped;
# OUT/table.md is rewritten from whatever has finished in OUT, every
# environment there (with each SFT's steps, tokens and minutes read from
# its metrics). Knobs (environment variables, defaults in brackets):
#   MODEL [smollm2-135m]  ENVS [math math-calc twentyq webshop tauretail alfworld]
#   EPISODES [100]  DEMOS [200]  SFT_STEPS [40]  BATCH_TOKENS [4096]
#   THREADS [1]  MAX_STEPS [0: the environment's]  AGENTRL [bin/agentrl]
#   TAURETAIL_CTX [4096]: the evaluation context for tauretail, whose tool
#   results make a prompt of the system message and the latest observation
#   alone longer than the model's default 2048 (the other environments use
#   that default)
# One thread is the robust choice on a shared machine (ggml's threads spin
# while they wait for each other).
set -eu

out=${1:-baseline}
agentrl=${AGENTRL:-bin/agentrl}
model=${MODEL:-smollm2-135m}
envs=${ENVS:-math math-calc twentyq webshop tauretail alfworld}
episodes=${EPISODES:-100}
demos=${DEMOS:-200}
sft_steps=${SFT_STEPS:-40}
batch_tokens=${BATCH_TOKENS:-4096}
threads=${THREADS:-1}
max_steps=${MAX_STEPS:-0}
tauretail_ctx=${TAURETAIL_CTX:-4096}

[ -x "$agentrl" ] || { echo "smollm2-baseline: $agentrl not found (make build)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "smollm2-baseline: python3 is needed for the table" >&2; exit 1; }
mkdir -p "$out"

# run FILE COMMAND...: run the command unless FILE exists, writing its
# standard output to FILE only when it succeeds.
run() {
	file=$1
	shift
	if [ -s "$file" ]; then
		echo "== $file: done before"
		return
	fi
	echo "== $*"
	start=$(date +%s)
	"$@" >"$file.part"
	mv "$file.part" "$file"
	echo "   $(($(date +%s) - start)) s"
}

for env in $envs; do
	dir=$out/$env
	mkdir -p "$dir"
	tokens=64
	[ "$env" = math ] && tokens=256
	ctx=0
	[ "$env" = tauretail ] && ctx=$tauretail_ctx
	eval_args="--policy model --model $model --split test --episodes $episodes --parallel 32 --ctx $ctx --max-steps $max_steps --max-tokens $tokens --temperature 0 --threads $threads --json"
	# shellcheck disable=SC2086 # eval_args is a list of words
	run "$dir/zero-shot.json" "$agentrl" envs eval "$env" $eval_args --out "$dir/zero-shot.jsonl"
	if [ ! -s "$dir/demos.jsonl" ]; then
		"$agentrl" envs demos "$env" --split train --episodes "$demos" --out "$dir/demos.jsonl.part"
		mv "$dir/demos.jsonl.part" "$dir/demos.jsonl"
	fi
	if [ ! -s "$dir/lora.gguf" ]; then
		echo "== sft $env"
		start=$(date +%s)
		# A checkpoint every 2 steps: an SFT cut short goes on from it.
		resume=""
		if [ -s "$dir/lora.gguf.checkpoint/checkpoint.gguf" ]; then
			resume="--resume $dir/lora.gguf.checkpoint"
		fi
		# shellcheck disable=SC2086 # resume is empty or two words
		"$agentrl" sft --model "$model" --data "$dir/demos.jsonl" --out "$dir/lora.gguf" --lora-rank 16 --lr 1e-3 \
			--epochs 100 --max-steps "$sft_steps" --batch-tokens "$batch_tokens" --threads "$threads" \
			--checkpoint-every 2 $resume --metrics "$dir/sft-metrics.jsonl" 2>>"$dir/sft.log"
		echo "   $(($(date +%s) - start)) s" | tee "$dir/sft-seconds.txt"
	fi
	# shellcheck disable=SC2086
	run "$dir/sft.json" "$agentrl" envs eval "$env" $eval_args --lora "$dir/lora.gguf" --out "$dir/sft.jsonl"
done

python3 - "$out" "$model" <<'EOF'
import json, os, sys
out, model = sys.argv[1], sys.argv[2]
# Every environment OUT holds, not only this invocation's ENVS: the table
# is the whole starting line however many sittings it took.
order = "math math-calc twentyq webshop tauretail alfworld".split()
present = [d for d in sorted(os.listdir(out)) if os.path.isdir(os.path.join(out, d))]
envs = [e for e in order if e in present] + [e for e in present if e not in order]
def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
def sft_budget(env):
    """Optimiser steps, training tokens and minutes of the env's SFT, from its metrics."""
    try:
        with open(os.path.join(out, env, "sft-metrics.jsonl")) as f:
            steps = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return None
    if not steps or not os.path.exists(os.path.join(out, env, "lora.gguf")):
        return None
    # The file holds every attempt in order: a run started over begins at
    # step 1 again, a resumed one goes on from its checkpoint's step
    # (repeating the steps after it), its clock from 0. Count the last
    # attempt from step 1, each step once, and the time of every process.
    steps = steps[max(i for i, s in enumerate(steps) if s["step"] == 1):]
    tokens = sum({s["step"]: s["tokens"] for s in steps}.values())
    ns = sum(a["elapsed_ns"] for a, b in zip(steps, steps[1:] + [None]) if b is None or b["elapsed_ns"] < a["elapsed_ns"])
    return f"{steps[-1]['step']} steps, {tokens:,} tokens, {ns / 60e9:.0f} min"
rows = ["| environment | policy | episodes | max steps | success | score | invalid actions | mean steps | eval seconds |",
        "|---|---|---|---|---|---|---|---|---|"]
missing, budgets = [], []
for env in envs:
    for name, label in (("zero-shot", "zero-shot"), ("sft", "LoRA SFT")):
        r = load(os.path.join(out, env, name + ".json"))
        if r is None:
            missing.append(f"{env} {label}")
            continue
        s = r["summary"]
        rows.append(f"| {env} | {label} | {s['episodes']} | {r.get('max_steps', '')} | "
                    f"{s['success_rate']:.3f} ± {s['success_rate_se']:.3f} | "
                    f"{s['mean_score']:.3f} ± {s['mean_score_se']:.3f} | {s['invalid_action_rate']:.3f} | "
                    f"{s['mean_steps']:.2f} | {r['seconds']:.0f} |")
    b = sft_budget(env)
    if b:
        budgets.append(f"{env}: {b}")
text = f"{model}, test split, greedy.\n\n" + "\n".join(rows) + "\n"
if budgets:
    text += "\nSFT (LoRA rank 16, lr 1e-3, cosine decay, expert demonstrations of the train split): " + "; ".join(budgets) + ".\n"
if missing:
    text += "\nNot finished: " + ", ".join(missing) + ".\n"
with open(os.path.join(out, "table.md"), "w") as f:
    f.write(text)
print(text)
EOF
