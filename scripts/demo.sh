#!/bin/sh
# The end-to-end demo, for `make demo` and for machines with the agentrl
# binary but without make or Go (the CUDA image runs it by default): show the
# devices, make the built-in tiny model, generate from it (on the GPU when
# there is one), run it as an agent in an environment next to the expert,
# then fine-tune a LoRA adapter on expert demonstrations and evaluate the
# model with it.
#
#   scripts/demo.sh [OUTPUT_DIR]    # default: a temporary folder
set -eu

out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/agentrl-demo.XXXXXX")}
mkdir -p "$out"
agentrl=${AGENTRL:-agentrl}

"$agentrl" version
"$agentrl" init-model --preset tiny --seed 1 --out "$out/tiny.gguf"
"$agentrl" generate --model "$out/tiny.gguf" --prompt "Action:" --n 3 --max-tokens 24 --temperature 0.8 --seed 1
"$agentrl" envs eval webshop --policy expert --split test --episodes 20 --parallel 8
"$agentrl" envs eval webshop --policy model --model "$out/tiny.gguf" --split test --episodes 8 --parallel 8 --max-steps 6 \
  --max-tokens 24 --seed 1 --out "$out/webshop-trajectories.jsonl"
"$agentrl" envs demos math --split train --episodes 64 --out "$out/math-demos.jsonl"
"$agentrl" sft --model "$out/tiny.gguf" --data "$out/math-demos.jsonl" --out "$out/math-lora.gguf" \
  --lora-rank 16 --lr 1e-3 --epochs 2
"$agentrl" envs eval math --policy model --model "$out/tiny.gguf" --lora "$out/math-lora.gguf" --split test \
  --episodes 16 --parallel 16 --max-tokens 64 --temperature 0.7 --seed 1
