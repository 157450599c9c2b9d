#!/usr/bin/python3
"""Checks torch_lora.py's forward pass against agentrl's llama.cpp inference.

For each case, makes a model with `agentrl init-model`, scores a text with
`agentrl score --json` (llama.cpp), computes the same log-probabilities with
`torch_lora.py --logprobs`, and compares them. Prints one line per case and
exits 1 if any max |difference| exceeds its tolerance.

    /usr/bin/python3 bench/peers/test_parity.py --agentrl bin/agentrl

The qwen2 and qwen3 cases are the tiny model rewritten under those
architectures (NeoX rotary mode) with random q/k/v and output biases
(qwen2) or random per-head q/k norm weights (qwen3) added. The LoRA cases
train an adapter with torch_lora.py --save-adapter, then compare llama.cpp
with the adapter loaded (score --lora) and torch_lora.py --adapter: a check
of the adapter file format and of the scale alpha/rank.

Tolerances: 1e-3 for F32 and F16 weights (llama.cpp keeps K and V in an F16
cache and, for F16 weights, rounds activations to F16 before each product;
the reference computes in F32). BF16 and Q8_0 weights make ggml round or
quantize the activations too, so those cases get 2e-2.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gguffile  # noqa: E402  (after the path set-up)

# No commas: `agentrl score` splits a --continuation value at commas
# (urfave/cli string-slice flags), and the prompt text goes through
# --continuation once to learn its token ids.
PROMPT = "You are in the middle of a room. Looking quickly around you: a cabinet 1; a drawer 2; a countertop 1."
CONTINUATION = (
    " Thought: the key is probably in the drawer. Action: go to drawer 2."
    " Observation: you arrive at drawer 2. The drawer 2 is closed. Action: open drawer 2."
    " Observation: you open the drawer 2. In it you see a key 1 and a pencil 3."
    " Action: take key 1 from drawer 2. Observation: you pick up the key 1 from the drawer 2."
    " Thought: now I need to find the locked cabinet and open it with the key before the timer runs out."
)

# (name, init-model flags, architecture to rewrite the model as or None,
#  torch_lora.py flags to train an adapter with or None, tolerance)
LORA = ["--steps", "4", "--warmup", "1", "--lr", "3e-2", "--batch", "2", "--seq-len", "32", "--rank", "4", "--alpha", "8"]
CASES = [
    ("tiny f32", ["--preset", "tiny"], None, None, 1e-3),
    ("small f32", ["--preset", "small"], None, None, 1e-3),
    ("tiny f16", ["--preset", "tiny", "--type", "f16"], None, None, 1e-3),
    ("small f16", ["--preset", "small", "--type", "f16"], None, None, 1e-3),
    ("tiny separate output", ["--preset", "tiny", "--separate-output", "--seed", "7"], None, None, 1e-3),
    ("tiny qwen2 biases", ["--preset", "tiny", "--separate-output"], "qwen2", None, 1e-3),
    ("tiny qwen3 qk-norm", ["--preset", "tiny"], "qwen3", None, 1e-3),
    ("tiny + LoRA", ["--preset", "tiny"], None, LORA, 1e-3),
    ("small f16 + LoRA", ["--preset", "small", "--type", "f16"], None, LORA + ["--targets", "q,v,down"], 1e-3),
    ("tiny bf16", ["--preset", "tiny", "--type", "bf16"], None, None, 2e-2),
    ("tiny q8_0", ["--preset", "tiny", "--type", "q8_0"], None, None, 2e-2),
]


def run(cmd):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if res.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (" ".join(cmd), res.returncode, res.stderr.strip()))
    return res.stdout


def llama_cpp_score(agentrl, model, prompt, continuation, adapter=None):
    """Token ids and log-probabilities of continuation after prompt."""
    lora = ["--lora", adapter] if adapter else []
    out = json.loads(run([agentrl, "score", "--model", model, "--prompt", prompt, "--continuation", continuation, "--json"] + lora))
    if len(out["scores"]) != 1:
        raise RuntimeError("agentrl score split %r into %d continuations" % (continuation, len(out["scores"])))
    score = out["scores"][0]
    return score["tokens"], score["logprobs"]


def prompt_tokens(agentrl, model, prompt):
    """The ids `agentrl score` feeds for prompt: BOS (when the model adds
    one) and the prompt's tokens, which score reports when the prompt text
    is given as a continuation (tokenised without specials)."""
    ids, _ = llama_cpp_score(agentrl, model, "x", prompt)
    with gguffile.GGUFFile(model) as g:
        md = g.metadata
        if md.get("tokenizer.ggml.add_bos_token", True):
            ids = [md["tokenizer.ggml.bos_token_id"]] + ids
    return ids


def rewrite_as(src, dst, arch, seed=1):
    """Writes the F32 llama model src as architecture arch ("qwen2" or
    "qwen3") with that architecture's extra tensors, random."""
    rng = np.random.default_rng(seed)
    with gguffile.GGUFFile(src) as g:
        metadata = []
        for key, vtype, value, etype in g.metadata_entries():
            if key == "general.architecture":
                value = arch
            elif key.startswith("llama."):
                key = arch + key[len("llama"):]
            metadata.append((key, vtype, value, etype))
        tensors = [(name, g.array(name)) for name in g.tensors]
        md = g.metadata
        n_layers = md["llama.block_count"]
        head_dim = md["llama.embedding_length"] // md["llama.attention.head_count"]
        shapes = {name: g.tensors[name].shape for name in g.tensors}
    for i in range(n_layers):
        p = "blk.%d." % i
        if arch == "qwen2":
            for t in ("attn_q", "attn_k", "attn_v"):
                n_out = shapes[p + t + ".weight"][0]
                tensors.append((p + t + ".bias", rng.normal(0, 0.5, n_out).astype(np.float32)))
        else:
            for t in ("attn_q_norm", "attn_k_norm"):
                tensors.append((p + t + ".weight", rng.uniform(0.5, 2.0, head_dim).astype(np.float32)))
    if arch == "qwen2" and "output.weight" in shapes:
        tensors.append(("output.bias", rng.normal(0, 0.5, shapes["output.weight"][0]).astype(np.float32)))
    gguffile.write(dst, metadata, tensors)


def torch_lora(*args):
    return json.loads(run([sys.executable, os.path.join(HERE, "torch_lora.py"), "--threads", "2"] + list(args)))


def check_case(agentrl, workdir, name, flags, arch, lora, tol):
    model = os.path.join(workdir, name.replace(" ", "-").replace("+", "") + ".gguf")
    run([agentrl, "init-model", "--out", model] + flags)
    if arch:
        rewritten = model.replace(".gguf", "-%s.gguf" % arch)
        rewrite_as(model, rewritten, arch)
        model = rewritten
    adapter = None
    if lora:
        adapter = model.replace(".gguf", "-lora.gguf")
        torch_lora("--model", model, "--save-adapter", adapter, *lora)
    prompt = prompt_tokens(agentrl, model, PROMPT)
    cont, want = llama_cpp_score(agentrl, model, PROMPT, CONTINUATION, adapter)
    ids = prompt + cont
    out = torch_lora("--model", model, "--logprobs", ",".join(map(str, ids)), *(["--adapter", adapter] if adapter else []))
    got = out["logprobs"][len(prompt) - 1:]
    if len(got) != len(want):
        raise RuntimeError("%s: %d log-probabilities from torch, %d from llama.cpp" % (name, len(got), len(want)))
    diffs = [abs(a - b) for a, b in zip(got, want)]
    worst = max(range(len(diffs)), key=diffs.__getitem__)
    return {
        "case": name,
        "architecture": out["architecture"],
        "weight_type": out["weight_type"],
        "tokens": len(ids),
        "scored": len(want),
        "max_abs_diff": diffs[worst],
        "mean_abs_diff": sum(diffs) / len(diffs),
        "worst_position": len(prompt) + worst,
        "tolerance": tol,
        "ok": diffs[worst] <= tol,
    }


def main():
    p = argparse.ArgumentParser(description="compare torch_lora.py --logprobs with llama.cpp through agentrl score")
    p.add_argument("--agentrl", default="agentrl", help="agentrl binary (default: agentrl on PATH)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON array")
    args = p.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="agentrl-parity-") as workdir:
        for name, flags, arch, lora, tol in CASES:
            results.append(check_case(args.agentrl, workdir, name, flags, arch, lora, tol))
            if not args.json:
                r = results[-1]
                print("%-22s %-6s %-5s %4d tokens (%3d scored)  max |diff| %.2e  mean %.2e  tol %.0e  %s" % (
                    r["case"], r["architecture"], r["weight_type"], r["tokens"], r["scored"], r["max_abs_diff"], r["mean_abs_diff"], r["tolerance"], "ok" if r["ok"] else "FAIL"))
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        sys.stdout.write("\n")
    failed = [r["case"] for r in results if not r["ok"]]
    if failed:
        print("parity FAILED: %s" % ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, OSError, ValueError) as e:
        print("test_parity: %s" % e, file=sys.stderr)
        sys.exit(2)
