#!/usr/bin/env python3
"""Independent reference for agentrl built on Hugging Face transformers + peft.

Loads a GGUF model with transformers' own GGUF loader (which dequantises
every weight to F32) and runs, on token ids it is given, the work agentrl
compares itself against:

  logprobs  log p(ids[i+1] | ids[..i]) of each sequence, in F32
  lora      LoRA training steps with peft and torch.optim.AdamW on one
            fixed batch: per-step losses and tokens/s
  generate  model.generate at several batch sizes: generated tokens/s

`agentrl bench reference` writes the job file and reads the JSON this
prints; the script can also be run by hand:

  .venv-peers/bin/python bench/peers/hf_reference.py --model M.gguf \
      --threads 2 --job job.json

The job file is one JSON object with any of the keys "logprobs", "lora",
"generate" (see README.md beside this file for their fields). One JSON
object goes to stdout; errors go to stderr with exit status 1 (bad flags
or a bad job: 2).

scripts/install-peers.sh installs what it needs into .venv-peers/.
"""

import argparse
import json
import os
import platform
import sys
import time
import traceback

# torch is imported in main, after the thread settings are in the
# environment: its OpenMP pool reads them once, at import.

LORA_TARGETS = {  # agentrl's target names -> the llama modules in transformers
    "q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj",
    "gate": "gate_proj", "up": "up_proj", "down": "down_proj",
}
# GGUF tensor names of the same matrices, for reading a llama.cpp adapter.
GGUF_TENSORS = {
    "q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output",
    "gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down",
}


class JobError(ValueError):
    """A job file that cannot be run as given."""


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="GGUF model file (any architecture transformers' GGUF loader reads)")
    p.add_argument("--job", required=True, metavar="FILE", help="JSON job: logprobs, lora and/or generate")
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="CPU threads for torch (default: one per core)")
    args = p.parse_args(argv)
    if args.threads < 1:
        p.error("--threads must be positive")
    return args


def set_threads(n):
    """Puts the thread count where torch's OpenMP and BLAS pools read it;
    must run before torch is imported."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(n)


def read_job(path):
    with open(path) as f:
        job = json.load(f)
    if not isinstance(job, dict) or not set(job) & {"logprobs", "lora", "generate"}:
        raise JobError("%s: want a JSON object with logprobs, lora and/or generate" % path)
    return job


def check_ids(seq, vocab, what):
    if not isinstance(seq, list) or not all(isinstance(t, int) for t in seq):
        raise JobError("%s: want a list of token ids" % what)
    for t in seq:
        if not 0 <= t < vocab:
            raise JobError("%s: token %d outside the vocabulary of %d" % (what, t, vocab))


def load_model(path):
    import torch
    from transformers import AutoModelForCausalLM

    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError("model %s not found" % path)
    start = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(
        os.path.dirname(path), gguf_file=os.path.basename(path), dtype=torch.float32)
    model.eval()
    return model, time.perf_counter() - start


def run_logprobs(torch, model, spec):
    """log p(ids[i+1] | ids[..i]) of every sequence, one forward pass each."""
    seqs = spec.get("sequences")
    if not isinstance(seqs, list) or not seqs:
        raise JobError("logprobs.sequences: want a non-empty list of token lists")
    vocab = model.config.vocab_size
    out = []
    start = time.perf_counter()
    with torch.no_grad():
        for i, seq in enumerate(seqs):
            check_ids(seq, vocab, "logprobs.sequences[%d]" % i)
            if len(seq) < 2:
                raise JobError("logprobs.sequences[%d]: need at least two tokens" % i)
            ids = torch.tensor([seq])
            logits = model(input_ids=ids).logits[0, :-1].float()
            lp = torch.log_softmax(logits, dim=-1).gather(1, ids[0, 1:, None])[:, 0]
            out.append([float(v) for v in lp])
    return {"logprobs": out, "seconds": time.perf_counter() - start}


def read_adapter_a(path):
    """Reads the A matrices of a fresh llama.cpp LoRA adapter:
    {(layer, target): array (rank, n_in)}.

    The adapter must be fresh (every B zero): a llama.cpp adapter's B rows
    of q and k are in llama.cpp's rotary order, which transformers' loader
    undoes for the base weights but peft would not for B."""
    import gguf

    reader = gguf.GGUFReader(path)
    by_gguf_name = {v: k for k, v in GGUF_TENSORS.items()}
    a = {}
    for t in reader.tensors:
        parts = t.name.split(".")  # blk.N.attn_q.weight.lora_a
        if len(parts) != 5 or parts[0] != "blk" or parts[2] not in by_gguf_name or parts[4] not in ("lora_a", "lora_b"):
            raise JobError("adapter %s: unexpected tensor %s" % (path, t.name))
        if parts[4] == "lora_b":
            if t.data.any():
                raise JobError("adapter %s: %s is not zero; only a fresh adapter can be the starting point" % (path, t.name))
            continue
        a[(int(parts[1]), by_gguf_name[parts[2]])] = t.data
    if not a:
        raise JobError("adapter %s: no lora_a tensors" % path)
    return a


def run_lora(torch, model, spec):
    """peft LoRA on the llama projections, AdamW, fixed batch; losses and speed."""
    from peft import LoraConfig, get_peft_model

    batch = spec.get("tokens")
    if not isinstance(batch, list) or not batch:
        raise JobError("lora.tokens: want a non-empty list of equally long token lists")
    for i, seq in enumerate(batch):
        check_ids(seq, model.config.vocab_size, "lora.tokens[%d]" % i)
        if len(seq) != len(batch[0]) or len(seq) < 2:
            raise JobError("lora.tokens[%d]: want %d (at least 2) tokens like the first" % (i, len(batch[0])))
    rank = int(spec.get("rank", 8))
    alpha = float(spec.get("alpha", 2 * rank))
    targets = spec.get("targets", list(LORA_TARGETS))
    unknown = [t for t in targets if t not in LORA_TARGETS]
    if unknown or rank < 1:
        raise JobError("lora: unknown targets %s or rank %d < 1" % (unknown, rank))
    steps, warmup = int(spec.get("steps", 4)), int(spec.get("warmup", 1))
    if steps <= warmup or warmup < 0:
        raise JobError("lora: steps %d must exceed warmup %d" % (steps, warmup))
    torch.manual_seed(int(spec.get("seed", 0)))

    cfg = LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0, bias="none",
                     target_modules=[LORA_TARGETS[t] for t in targets], task_type="CAUSAL_LM")
    peft_model = get_peft_model(model, cfg)
    adapter = spec.get("adapter")
    if adapter:
        # Start from agentrl's initial A, so the two runs differ only in
        # how they compute.
        a = read_adapter_a(adapter)
        layers = peft_model.base_model.model.model.layers
        for (layer, target), value in a.items():
            block = layers[layer].self_attn if target in ("q", "k", "v", "o") else layers[layer].mlp
            lora_a = getattr(block, LORA_TARGETS[target]).lora_A["default"].weight
            if tuple(lora_a.shape) != value.shape:
                raise JobError("adapter %s: layer %d %s A is %s, peft's is %s" % (adapter, layer, target, value.shape, tuple(lora_a.shape)))
            with torch.no_grad():
                lora_a.copy_(torch.from_numpy(value.astype("float32")))
        if len(a) != len(layers) * len(targets):
            raise JobError("adapter %s: %d A matrices, want %d" % (adapter, len(a), len(layers) * len(targets)))
    peft_model.train()
    params = [p for p in peft_model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=float(spec.get("lr", 1e-4)), betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    ids = torch.tensor(batch)
    losses, step_seconds = [], []
    for _ in range(steps):
        start = time.perf_counter()
        # labels = inputs: transformers shifts them, so the loss is the mean
        # cross-entropy of tokens 1..n-1 of every row, as agentrl's.
        loss = peft_model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
        step_seconds.append(time.perf_counter() - start)
    with torch.no_grad():
        final = float(peft_model(input_ids=ids, labels=ids).loss)
    tokens_per_step = len(batch) * (len(batch[0]) - 1)
    timed = step_seconds[warmup:]
    return {
        "batch": len(batch), "seq_len": len(batch[0]) - 1, "rank": rank, "alpha": alpha,
        "targets": targets, "lr": float(spec.get("lr", 1e-4)), "adapter": adapter,
        "trainable_parameters": sum(p.numel() for p in params),
        "losses": losses, "final_loss": final, "step_seconds": step_seconds,
        "timed_steps": len(timed), "seconds": sum(timed),
        "tokens_per_second": tokens_per_step * len(timed) / sum(timed),
        "best_tokens_per_second": tokens_per_step / min(timed),
    }


def run_generate(torch, model, spec):
    """Greedy generation of exactly new_tokens tokens for n copies of one prompt."""
    prompt = spec.get("prompt")
    check_ids(prompt, model.config.vocab_size, "generate.prompt")
    new_tokens = int(spec.get("new_tokens", 64))
    sizes = spec.get("sequences", [1])
    if not prompt or new_tokens < 1 or not sizes or any(int(n) < 1 for n in sizes):
        raise JobError("generate: want a prompt, new_tokens >= 1 and positive sequence counts")
    pad = model.config.eos_token_id if model.config.pad_token_id is None else model.config.pad_token_id
    if isinstance(pad, list):
        pad = pad[0]

    def generate(n, count):
        ids = torch.tensor([prompt] * n)
        with torch.no_grad():
            start = time.perf_counter()
            # min_new_tokens = max_new_tokens: every sequence runs its full
            # length, as agentrl's engine does with IgnoreEOS.
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                 max_new_tokens=count, min_new_tokens=count, pad_token_id=pad)
            return out[:, len(prompt):], time.perf_counter() - start

    generate(1, 4)  # warm-up: first-call allocations and lazy initialisation
    results = []
    for n in sizes:
        out, seconds = generate(int(n), new_tokens)
        results.append({"sequences": int(n), "seconds": seconds,
                        "tokens_per_second": int(n) * new_tokens / seconds,
                        "first_tokens": [int(t) for t in out[0]]})
    return {"prompt_tokens": len(prompt), "new_tokens": new_tokens, "results": results}


def main(argv):
    args = parse_args(argv)
    try:
        job = read_job(args.job)
    except (OSError, ValueError) as e:
        print("hf_reference: %s" % e, file=sys.stderr)
        return 2
    set_threads(args.threads)
    import torch
    import transformers
    import peft

    # The loader's progress bars would bury a real error in the stderr the
    # caller shows.
    transformers.utils.logging.disable_progress_bar()

    torch.set_num_threads(args.threads)
    report = {"model": os.path.abspath(args.model), "threads": args.threads,
              "versions": {"python": platform.python_version(), "torch": torch.__version__,
                           "transformers": transformers.__version__, "peft": peft.__version__}}
    try:
        model, load_seconds = load_model(args.model)
        report["load_seconds"] = load_seconds
        report["vocab_size"] = model.config.vocab_size
        # Order matters: lora wraps the model in peft's LoRA layers, so the
        # base-model work runs first.
        if "logprobs" in job:
            report["logprobs"] = run_logprobs(torch, model, job["logprobs"])
        if "generate" in job:
            report["generate"] = run_generate(torch, model, job["generate"])
        if "lora" in job:
            report["lora"] = run_lora(torch, model, job["lora"])
    except JobError as e:
        print("hf_reference: %s" % e, file=sys.stderr)
        return 2
    except Exception:  # noqa: BLE001 - the caller shows stderr; exit 1 says it failed
        traceback.print_exc()
        return 1
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
