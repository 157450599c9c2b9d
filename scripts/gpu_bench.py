#!/usr/bin/env python3
"""Helpers of scripts/gpu-bench.sh: comparisons, tables and the PyTorch side.

Subcommands (each prints to stdout; JSON results go to --out files):

  deps            which of torch, transformers and peft are importable, and
                  whether torch sees a CUDA device
  parity          compares two `agentrl score --json` outputs token by token
  infer-table     prints an `agentrl bench infer --json` output as a table
  ours-train      extracts tokens/s from an `agentrl bench train --json` output
  torch-train     LoRA steps of transformers' Qwen2ForCausalLM with peft
  torch-generate  transformers' generate throughput
  summary         ratios against PyTorch and model FLOP utilisation

The parsing subcommands need only the standard library; torch-train and
torch-generate need torch, transformers and peft.
"""

import argparse
import json
import sys
import time

# Dense bf16 throughput of one H200 measured on random 8192^3 products: the
# denominator of the model FLOP utilisation.
DEFAULT_PEAK_FLOPS = 790e12

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def load_json(path):
    with open(path) as f:
        return json.load(f)


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


# ---- deps -------------------------------------------------------------------


def cmd_deps(args):
    ok = True
    try:
        import torch
    except ImportError as e:
        print("torch: not installed (%s)" % e)
        torch = None
        ok = False
    if torch is not None:
        if torch.cuda.is_available():
            print("torch %s: CUDA %s, %s" % (torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0)))
        else:
            print("torch %s: no CUDA device visible" % torch.__version__)
            ok = ok and not args.need_cuda
    for name in ("transformers", "peft"):
        try:
            module = __import__(name)
            print("%s %s" % (name, module.__version__))
        except ImportError as e:
            print("%s: not installed (%s)" % (name, e))
            ok = False
    return 0 if ok else 1


# ---- parity -----------------------------------------------------------------


def cmd_parity(args):
    ref, other = load_json(args.reference)["scores"], load_json(args.other)["scores"]
    if len(ref) != len(other):
        print("parity %s: FAIL: %d continuations against %d" % (args.label, len(ref), len(other)))
        return 1
    diffs = []
    for i, (a, b) in enumerate(zip(ref, other)):
        if a["tokens"] != b["tokens"]:
            print("parity %s: FAIL: continuation %d tokenised differently: %s against %s" % (args.label, i, a["tokens"], b["tokens"]))
            return 1
        diffs.extend(abs(x - y) for x, y in zip(a["logprobs"], b["logprobs"]))
    if not diffs:
        print("parity %s: FAIL: no tokens scored" % args.label)
        return 1
    worst = max(diffs)
    verdict = "ok" if worst <= args.tol else "FAIL"
    print("parity %s: %d continuations, %d tokens, max |diff| %.3g, mean |diff| %.3g of log-probabilities: %s (tolerance %g)"
          % (args.label, len(ref), len(diffs), worst, sum(diffs) / len(diffs), verdict, args.tol))
    return 0 if verdict == "ok" else 1


# ---- agentrl benchmark outputs ----------------------------------------------


def cmd_infer_table(args):
    report = load_json(args.bench)
    for m in report["models"]:
        model = m["model"]
        name = model.get("name") or model.get("path", "?")
        print("%s (%s):" % (args.label, name))
        print("  %9s %16s %16s %16s %14s" % ("sequences", "prompt tok/s", "ceiling gen/s", "engine gen/s", "orchestration"))
        for r in m["results"]:
            print("  %9d %16.0f %16.0f %16.0f %13.1f%%" % (r["parallel"], r["ceiling_prompt_tok_s"], r["ceiling_gen_tok_s"],
                                                        r["engine_gen_tok_s"], r["orchestration_pct"]))
    return 0


def cmd_ours_train(args):
    with open(args.output) as f:
        text = f.read()
    try:
        report = json.loads(text)
        ours = report["results"][0]["ours"]
        tps = float(ours["tokens_per_second"])
    except (ValueError, KeyError, IndexError, TypeError) as e:
        print("agentrl bench train: no results[0].ours.tokens_per_second in its output (%r):\n%s" % (e, text[-2000:]))
        return 1
    backend = ours.get("backend", "unknown")
    write_json(args.out, {"tokens_per_second": tps, "backend": backend, "report": report})
    print("agentrl LoRA training: %.0f tokens/s on %s (batch %s x %s tokens, %s timed steps)"
          % (tps, backend, ours.get("batch", "?"), ours.get("seq_len", "?"), ours.get("timed_steps", "?")))
    profile = ours.get("profile") or []
    if profile:
        print("where the time of %d profiled steps went (each graph node run and timed alone):" % profile[-1]["calls"])
        for op in profile:
            if op["share"] >= 0.01 or op["op"] == "outside the graphs":
                print("  %5.1f%% %9.1f ms %6d calls  %s" % (100 * op["share"], 1000 * op["seconds"], op["calls"], op["op"]))
    if args.want_gpu and not backend.upper().startswith(("CUDA", "GPU")):
        print("agentrl bench train ran on %s, not on the GPU" % backend)
        return 1
    return 0


def cmd_rl_table(args):
    rows = []
    with open(args.metrics) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    if not rows:
        print("%s: no finished iteration in %s" % (args.label, args.metrics))
        return 1
    print("%s:" % args.label)
    print("  %4s %10s %9s %9s %11s %12s %9s %9s" % ("iter", "rollout s", "train s", "handover", "gen tok/s", "train tok/s", "ratio", "wall s"))
    bad = []
    generated = trained = 0
    for r in rows:
        phase, extra = r.get("phase_s", {}), r.get("metrics", {})
        ratio = extra.get("ratio", float("nan"))
        rollout_s, train_s = phase.get("rollout", 0.0), phase.get("train", 0.0)
        # The counters are cumulative; the first iteration's trained tokens
        # include the warm start's, so its rate is not the update's.
        gen_tps = (r["rollout_tokens"] - generated) / rollout_s if rollout_s else float("nan")
        train_tps = (r["train_tokens"] - trained) / train_s if train_s and r["iteration"] > 1 else float("nan")
        generated, trained = r["rollout_tokens"], r["train_tokens"]
        print("  %4d %10.2f %9.2f %9.3f %11.0f %12.0f %9.5f %9.1f" % (
            r["iteration"], rollout_s, train_s, phase.get("handover", 0.0), gen_tps, train_tps, ratio, r.get("wall_s", 0.0)))
        # Sampling and training log-probabilities of one policy agree: the
        # mean importance ratio of the first update starts at 1.
        if not abs(ratio - 1) <= args.ratio_tol:
            bad.append(r["iteration"])
    if bad:
        print("  the importance ratio is off 1 by more than %g at iterations %s: sampling and training disagree" % (args.ratio_tol, bad))
        return 1
    return 0


# ---- PyTorch ------------------------------------------------------------------


def qwen2_model(torch, shape, device, seed, use_cache):
    """transformers' Qwen2ForCausalLM of the shape, with random weights:
    BF16 on a GPU, F32 on the CPU (where BF16 is slow)."""
    import inspect

    import transformers

    kwargs = dict(
        vocab_size=shape["vocab_size"],
        hidden_size=shape["embedding_length"],
        intermediate_size=shape["feed_forward_length"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["head_count"],
        num_key_value_heads=shape["head_count_kv"],
        max_position_embeddings=shape["context_length"],
        rms_norm_eps=shape["rms_norm_epsilon"],
        tie_word_embeddings=True,
        use_cache=use_cache,
    )
    # transformers 5 moved rope_theta into rope_parameters.
    if "rope_parameters" in inspect.signature(transformers.Qwen2Config.__init__).parameters:
        kwargs["rope_parameters"] = {"rope_type": "default", "rope_theta": shape["rope_freq_base"]}
    else:
        kwargs["rope_theta"] = shape["rope_freq_base"]
    config = transformers.Qwen2Config(**kwargs)
    torch.manual_seed(seed)
    with torch.device(device):
        model = transformers.Qwen2ForCausalLM(config)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    return model.to(dtype=dtype), transformers.__version__


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def cmd_torch_train(args):
    import torch
    import peft

    device = torch.device(args.device)
    shape = load_json(args.shape)
    model, transformers_version = qwen2_model(torch, shape, device, args.seed, use_cache=False)
    lora = peft.LoraConfig(r=args.rank, lora_alpha=args.alpha, lora_dropout=0.0, bias="none",
                           target_modules=LORA_TARGETS, task_type="CAUSAL_LM")
    model = peft.get_peft_model(model, lora)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4, fused=device.type == "cuda")
    generator = torch.Generator().manual_seed(args.seed)
    batch = torch.randint(0, shape["vocab_size"], (args.batch, args.seq_len), generator=generator).to(device)

    step_seconds, losses = [], []
    for _ in range(args.warmup + args.steps):
        sync(torch, device)
        start = time.perf_counter()
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync(torch, device)
        step_seconds.append(time.perf_counter() - start)
        losses.append(loss.item())
    timed = step_seconds[args.warmup:]
    tokens = args.batch * args.seq_len * len(timed)
    result = {
        "tokens_per_second": tokens / sum(timed),
        "batch": args.batch, "seq_len": args.seq_len, "rank": args.rank, "alpha": args.alpha,
        "targets": LORA_TARGETS, "timed_steps": len(timed), "warmup_steps": args.warmup,
        "step_seconds": step_seconds, "losses": losses,
        "trainable_parameters": sum(p.numel() for p in params),
        "parameters": sum(p.numel() for p in model.parameters()),
        "peak_memory_bytes": torch.cuda.max_memory_allocated(device) if device.type == "cuda" else 0,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__, "transformers": transformers_version, "peft": peft.__version__,
        "attention": getattr(model.config, "_attn_implementation", "unknown"),
    }
    write_json(args.out, result)
    print("PyTorch + peft LoRA training: %.0f tokens/s (batch %d x %d tokens, rank %d, %d timed steps, peak memory %.1f GiB)"
          % (result["tokens_per_second"], args.batch, args.seq_len, args.rank, len(timed), result["peak_memory_bytes"] / 2**30))
    return 0


def cmd_torch_generate(args):
    import torch

    device = torch.device(args.device)
    shape = load_json(args.shape)
    model, transformers_version = qwen2_model(torch, shape, device, args.seed, use_cache=True)
    model.eval()
    generator = torch.Generator().manual_seed(args.seed)
    prompts = torch.randint(0, shape["vocab_size"], (args.parallel, args.prompt_tokens), generator=generator).to(device)
    mask = torch.ones_like(prompts)
    runs = []
    with torch.inference_mode():
        for _ in range(1 + args.repeats):  # the first run warms up
            sync(torch, device)
            start = time.perf_counter()
            out = model.generate(input_ids=prompts, attention_mask=mask, max_new_tokens=args.gen_tokens,
                                 min_new_tokens=args.gen_tokens, do_sample=False, use_cache=True, pad_token_id=0)
            sync(torch, device)
            runs.append(time.perf_counter() - start)
            if out.shape[1] != args.prompt_tokens + args.gen_tokens:
                print("transformers generate: produced %d tokens, want %d" % (out.shape[1] - args.prompt_tokens, args.gen_tokens))
                return 1
    best = min(runs[1:])
    result = {
        "gen_tok_s": args.parallel * args.gen_tokens / best,
        "parallel": args.parallel, "prompt_tokens": args.prompt_tokens, "gen_tokens": args.gen_tokens,
        "seconds": runs, "torch": torch.__version__, "transformers": transformers_version,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
    }
    write_json(args.out, result)
    print("transformers generate: %.0f generated tokens/s at %d sequences (%d prompt + %d generated tokens each, greedy, best of %d)"
          % (result["gen_tok_s"], args.parallel, args.prompt_tokens, args.gen_tokens, args.repeats))
    return 0


# ---- summary ------------------------------------------------------------------


def lora_flops_per_token(shape, seq_len, rank):
    """FLOPs of one LoRA training step per token.

    Frozen matrices cost a forward product and the product for the input
    gradient (2 + 2 FLOPs per weight): no weight gradient. The LoRA
    matrices also get weight gradients (6 per weight). Attention scores
    and values cost 4 * context * q_dim per token and layer forward, half
    of that under the causal mask, and twice as much again backward.
    """
    d, ff, layers, vocab = shape["embedding_length"], shape["feed_forward_length"], shape["layers"], shape["vocab_size"]
    head_dim = d // shape["head_count"]
    q, kv = shape["head_count"] * head_dim, shape["head_count_kv"] * head_dim
    frozen = layers * (d * q + 2 * d * kv + q * d + 3 * d * ff) + vocab * d
    lora = layers * rank * ((d + q) + 2 * (d + kv) + (q + d) + 2 * (d + ff) + (ff + d))
    attention = layers * 3 * 2 * seq_len * q
    return 4 * frozen + 6 * lora + attention


def engine_tps(bench_path, parallel):
    report = load_json(bench_path)
    for m in report["models"]:
        for r in m["results"]:
            if r["parallel"] == parallel:
                return r["engine_gen_tok_s"]
    return None


def optional_json(path):
    if not path:
        return None
    try:
        return load_json(path)
    except (OSError, ValueError):
        return None


def cmd_summary(args):
    shape = load_json(args.shape)
    ours, torch_train = optional_json(args.ours_train), optional_json(args.torch_train)
    flops = lora_flops_per_token(shape, args.seq_len, args.rank)
    print("model: Qwen2.5-0.5B shape, %d parameters, vocabulary %d; LoRA rank %d on %s; batch %d x %d tokens"
          % (shape["parameters"], shape["vocab_size"], args.rank, ",".join(LORA_TARGETS), args.batch, args.seq_len))
    print("training FLOPs per token: %.3g (frozen forward + input gradient, LoRA with weight gradients, causal attention)" % flops)
    failed = False
    for label, result in (("agentrl", ours), ("PyTorch + peft", torch_train)):
        if result is None:
            print("  %-15s not measured" % label)
            continue
        tps = result["tokens_per_second"]
        print("  %-15s %9.0f tokens/s  MFU %5.1f%% of %.0f TFLOP/s" % (label, tps, 100 * tps * flops / args.peak, args.peak / 1e12))
    if ours and torch_train:
        ratio = ours["tokens_per_second"] / torch_train["tokens_per_second"]
        verdict = "meets the 1.0x target" if ratio >= 1 else "BELOW the 1.0x target"
        print("training ratio agentrl / PyTorch + peft: %.2fx (%s; goal 2x)" % (ratio, verdict))
        failed = failed or ratio < 1
    else:
        print("training ratio agentrl / PyTorch + peft: not available")

    ours_gen = engine_tps(args.ours_infer, args.parallel) if args.ours_infer else None
    torch_gen = optional_json(args.torch_generate)
    if ours_gen is not None and torch_gen is not None:
        ratio = ours_gen / torch_gen["gen_tok_s"]
        verdict = "meets the 5x target" if ratio >= 5 else "BELOW the 5x target"
        print("inference at %d sequences: agentrl %.0f tok/s, transformers generate %.0f tok/s: %.2fx (%s)"
              % (args.parallel, ours_gen, torch_gen["gen_tok_s"], ratio, verdict))
        failed = failed or ratio < 5
    else:
        print("inference ratio agentrl / transformers generate at %d sequences: not available" % args.parallel)
    return 1 if failed else 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("deps", help="report torch, transformers and peft")
    s.add_argument("--need-cuda", action="store_true", help="fail unless torch sees a CUDA device")
    s.set_defaults(func=cmd_deps)

    s = sub.add_parser("parity", help="compare two `agentrl score --json` outputs")
    s.add_argument("reference")
    s.add_argument("other")
    s.add_argument("--label", default="")
    s.add_argument("--tol", type=float, default=1e-2, help="largest |difference| of a log-probability that passes")
    s.set_defaults(func=cmd_parity)

    s = sub.add_parser("infer-table", help="print `agentrl bench infer --json` as a table")
    s.add_argument("bench")
    s.add_argument("--label", default="agentrl bench infer")
    s.set_defaults(func=cmd_infer_table)

    s = sub.add_parser("ours-train", help="extract tokens/s from `agentrl bench train --json`")
    s.add_argument("output")
    s.add_argument("--out", required=True)
    s.add_argument("--want-gpu", action="store_true", help="fail unless it trained on a GPU backend")
    s.set_defaults(func=cmd_ours_train)

    s = sub.add_parser("rl-table", help="print a run's metrics.jsonl by iteration")
    s.add_argument("metrics")
    s.add_argument("--label", default="agentrl train grpo")
    s.add_argument("--ratio-tol", type=float, default=0.05, help="largest |mean importance ratio - 1| that passes")
    s.set_defaults(func=cmd_rl_table)

    for name, func in (("torch-train", cmd_torch_train), ("torch-generate", cmd_torch_generate)):
        s = sub.add_parser(name)
        s.add_argument("--shape", required=True, help="JSON summary printed by shapedmodel")
        s.add_argument("--device", default="cuda")
        s.add_argument("--seed", type=int, default=1)
        s.add_argument("--out", required=True)
        s.set_defaults(func=func)
        if name == "torch-train":
            s.add_argument("--batch", type=int, default=8)
            s.add_argument("--seq-len", type=int, default=1024)
            s.add_argument("--rank", type=int, default=8)
            s.add_argument("--alpha", type=float, default=16)
            s.add_argument("--steps", type=int, default=10)
            s.add_argument("--warmup", type=int, default=3)
        else:
            s.add_argument("--parallel", type=int, default=32)
            s.add_argument("--prompt-tokens", type=int, default=64)
            s.add_argument("--gen-tokens", type=int, default=128)
            s.add_argument("--repeats", type=int, default=3)

    s = sub.add_parser("summary", help="ratios and model FLOP utilisation")
    s.add_argument("--shape", required=True)
    s.add_argument("--ours-train")
    s.add_argument("--torch-train")
    s.add_argument("--ours-infer")
    s.add_argument("--torch-generate")
    s.add_argument("--parallel", type=int, default=32)
    s.add_argument("--batch", type=int, default=8)
    s.add_argument("--seq-len", type=int, default=1024)
    s.add_argument("--rank", type=int, default=8)
    s.add_argument("--peak", type=float, default=DEFAULT_PEAK_FLOPS, help="peak FLOP/s for the utilisation")
    s.set_defaults(func=cmd_summary)

    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
