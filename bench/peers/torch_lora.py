#!/usr/bin/python3
"""PyTorch reference for agentrl's training benchmark.

Trains a LoRA (or, with --full, every weight) of a llama-family GGUF model
with AdamW on one fixed batch of token ids, and prints one JSON object on
stdout: the model, the configuration, the loss of every step and the
training throughput over the timed steps. The step is the one agentrl's
trainer takes: LoRA on q, k, v, o, gate, up and down of every block,
W x + (alpha/r) B (A x), token cross-entropy on every position.

With --logprobs it instead prints the model's log-probability of each next
token of a token list, to check the architecture against llama.cpp.
--adapter starts from (or, with --logprobs, applies) a llama.cpp LoRA
adapter and --save-adapter writes the trained one, so that a run can start
from the same adapter as agentrl's trainer and llama.cpp can check the
result.

Run it with Debian's python3 (/usr/bin/python3, which sees python3-torch);
scripts/install-bench-deps.sh installs what it needs.
"""

import argparse
import json
import os
import sys
import time

# torch, and llama_torch which imports it, are imported in main once the
# thread settings are in the environment; functions below import
# llama_torch's names locally for that reason.


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="GGUF model (llama, qwen2 or qwen3; F32, F16, BF16 or Q8_0 weights)")
    p.add_argument("--batch", type=int, default=8, help="sequences per batch (default 8)")
    p.add_argument("--seq-len", type=int, default=256, help="tokens per sequence (default 256)")
    p.add_argument("--tokens", metavar="FILE", help="JSON array of sequences of seq-len+1 token ids to train on, instead of a random batch; sets --batch and --seq-len")
    p.add_argument("--steps", type=int, default=6, help="optimizer steps, warm-up included (default 6)")
    p.add_argument("--warmup", type=int, default=1, help="first steps left out of the timing (default 1)")
    p.add_argument("--lr", type=float, default=1e-4, help="AdamW learning rate (default 1e-4)")
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.999)
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--rank", type=int, default=8, help="LoRA rank (default 8)")
    p.add_argument("--alpha", type=float, default=None, help="LoRA alpha; the scale is alpha/rank (default: the rank)")
    p.add_argument("--targets", default="q,k,v,o,gate,up,down", help="LoRA target matrices (default q,k,v,o,gate,up,down)")
    p.add_argument("--full", action="store_true", help="train every weight (F32) instead of a LoRA")
    p.add_argument("--seed", type=int, default=0, help="seed of the random batch and of LoRA A (default 0)")
    p.add_argument("--threads", type=int, default=2, help="CPU threads for PyTorch and BLAS (default 2)")
    p.add_argument("--device", default="cpu", help="torch device: cpu (default) or cuda")
    p.add_argument("--dtype", choices=("f32", "bf16"), default="f32", help="type of the frozen base matrices and their products (default f32)")
    p.add_argument("--adapter", metavar="FILE", help="start from this llama.cpp LoRA adapter (GGUF) instead of a new one; sets --rank, --alpha and --targets")
    p.add_argument("--save-adapter", metavar="FILE", help="write the trained LoRA as a llama.cpp adapter (GGUF)")
    p.add_argument("--logprobs", metavar="IDS", help="print the model's next-token log-probabilities of these comma-separated token ids (or a JSON array) instead of training")
    args = p.parse_args(argv)
    if args.alpha is None:
        args.alpha = float(args.rank)
    if args.full and args.dtype != "f32":
        p.error("--full trains F32 weights: use --dtype f32")
    if args.full and (args.adapter or args.save_adapter):
        p.error("--adapter and --save-adapter are LoRA flags: drop --full")
    if args.steps <= args.warmup and not args.logprobs:
        p.error("--steps %d must exceed --warmup %d to time anything" % (args.steps, args.warmup))
    for name in ("batch", "seq_len", "rank", "threads"):
        if getattr(args, name) < 1:
            p.error("--%s must be positive" % name.replace("_", "-"))
    return args


def parse_ids(text):
    text = text.strip()
    ids = json.loads(text) if text.startswith("[") else [int(t) for t in text.split(",") if t.strip()]
    if len(ids) < 2:
        raise ValueError("need at least two token ids, got %d" % len(ids))
    return ids


def check_ids(ids, vocab_size, what):
    bad = [t for t in ids if not 0 <= t < vocab_size]
    if bad:
        raise ValueError("%s: token id %d outside the vocabulary of %d" % (what, bad[0], vocab_size))


def device_info(torch, device):
    if device.type == "cuda":
        return {"device": "gpu", "device_name": torch.cuda.get_device_name(device)}
    name = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"device": "cpu", "device_name": name}


def logprobs(torch, model, ids):
    check_ids(ids, model.config.vocab_size, "--logprobs")
    if len(ids) > model.config.context_length:
        raise ValueError("--logprobs: %d tokens exceed the model's context of %d" % (len(ids), model.config.context_length))
    tokens = torch.tensor([ids], dtype=torch.long, device=model.device)
    with torch.no_grad():
        logits = model.forward(tokens)[0]
    lp = torch.log_softmax(logits.double(), dim=-1)
    nxt = torch.tensor(ids[1:], device=model.device)
    return lp[:-1].gather(1, nxt[:, None])[:, 0].cpu().tolist()


def short_targets(names):
    """The --targets names of the adapted weights, in DEFAULT_TARGETS order."""
    from llama_torch import DEFAULT_TARGETS, TARGET_TENSORS

    present = {n.split(".")[2] for n in names}
    return [t for t in DEFAULT_TARGETS if TARGET_TENSORS[t] in present]


def train(torch, model, args, device, adapter_params):
    from llama_torch import DEFAULT_TARGETS, TARGET_TENSORS

    generator = torch.Generator().manual_seed(args.seed)
    if args.tokens:
        with open(args.tokens) as f:
            seqs = json.load(f)
        if not seqs or len({len(s) for s in seqs}) != 1 or len(seqs[0]) < 2:
            raise ValueError("%s: want a non-empty array of equally long sequences of at least 2 token ids" % args.tokens)
        for i, s in enumerate(seqs):
            check_ids(s, model.config.vocab_size, "%s: sequence %d" % (args.tokens, i))
        batch = torch.tensor(seqs, dtype=torch.long)
        args.batch, args.seq_len = batch.shape[0], batch.shape[1] - 1
    else:
        batch = torch.randint(0, model.config.vocab_size, (args.batch, args.seq_len + 1), generator=generator)
    if args.seq_len > model.config.context_length:
        raise ValueError("--seq-len %d exceeds the model's context of %d tokens" % (args.seq_len, model.config.context_length))
    batch = batch.to(device)
    inputs, targets = batch[:, :-1], batch[:, 1:]

    if args.full:
        params = model.trainable_full()
        targets_used = []
    elif args.adapter:
        params = adapter_params
        targets_used = short_targets(model.lora)
    else:
        targets_used = [t.strip() for t in args.targets.split(",") if t.strip()]
        unknown = [t for t in targets_used if t not in TARGET_TENSORS]
        if unknown or not targets_used:
            raise ValueError("--targets: unknown target %r (want some of %s)" % (unknown[0] if unknown else "", ",".join(DEFAULT_TARGETS)))
        params = model.add_lora(targets_used, args.rank, args.alpha, generator)
    opt = torch.optim.AdamW(params, lr=args.lr, betas=(args.beta1, args.beta2), eps=args.eps, weight_decay=args.weight_decay)

    def loss_of():
        logits = model.forward(inputs)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    losses, step_seconds = [], []
    for _ in range(args.steps):
        sync()
        start = time.perf_counter()
        loss = loss_of()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
        sync()
        step_seconds.append(time.perf_counter() - start)
    with torch.no_grad():
        final_loss = loss_of().item()
    if args.save_adapter:
        model.save_lora(args.save_adapter, args.alpha)

    timed = step_seconds[args.warmup:]
    seconds = sum(timed)
    tokens = args.batch * args.seq_len * len(timed)
    return {
        "trainable_parameters": sum(p.numel() for p in params),
        "config": {
            "mode": "full" if args.full else "lora",
            "rank": 0 if args.full else args.rank,
            "alpha": 0.0 if args.full else args.alpha,
            "targets": targets_used,
            "batch": args.batch,
            "seq_len": args.seq_len,
            "data": args.tokens or "random",
            "adapter": args.adapter,
            "save_adapter": args.save_adapter,
            "steps": args.steps,
            "warmup_steps": args.warmup,
            "lr": args.lr,
            "beta1": args.beta1,
            "beta2": args.beta2,
            "eps": args.eps,
            "weight_decay": args.weight_decay,
            "seed": args.seed,
            "threads": args.threads,
            "dtype": args.dtype,
        },
        "losses": losses,
        "final_loss": final_loss,
        "step_seconds": step_seconds,
        "timed_steps": len(timed),
        "tokens": tokens,
        "seconds": seconds,
        "tokens_per_second": tokens / seconds,
    }


def main(argv):
    args = parse_args(argv)
    # Debian's torch runs element-wise ops on an OpenMP pool and matrix
    # products on OpenBLAS's own pthread pool, which sizes itself when it
    # loads: both counts must be in the environment before torch is
    # imported. Idle threads of one pool spinning while the other works
    # (or while other processes share the cores) cost up to 8x, so OpenMP
    # threads sleep when idle unless the caller chose otherwise.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    import torch

    import llama_torch

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device %s: this PyTorch build sees no CUDA device" % args.device)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    model = llama_torch.Llama(args.model, device=device, dtype=dtype)
    adapter_params = []
    if args.adapter:
        adapter_params, args.rank, alpha = model.load_lora(args.adapter)
        # alpha 0 means scale 1 in llama.cpp: the same as alpha = rank.
        args.alpha = alpha or float(args.rank)
    out = {
        "model": os.path.abspath(args.model),
        "architecture": model.config.architecture,
        "weight_type": model.weight_type,
        "model_config": model.config.as_dict(),
        "parameters": model.n_parameters,
    }
    if args.logprobs:
        ids = parse_ids(args.logprobs)
        out["adapter"] = args.adapter
        out["tokens"] = ids
        out["logprobs"] = logprobs(torch, model, ids)
    else:
        out.update(train(torch, model, args, device, adapter_params))
    out["torch_version"] = torch.__version__
    out.update(device_info(torch, device))
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except (ValueError, OSError) as e:
        print("torch_lora: %s" % e, file=sys.stderr)
        sys.exit(1)
