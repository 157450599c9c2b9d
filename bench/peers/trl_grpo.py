#!/usr/bin/env python3
"""One GRPO iteration with TRL's GRPOTrainer, the peer of `agentrl bench grpo`.

Loads a GGUF model with transformers' own GGUF loader (which dequantises
every weight to F32), gives TRL a peft LoRA config of the given rank, alpha
and targets, and runs GRPOTrainer for exactly one optimisation step on the
prompts of a file written by `agentrl envs demos` (one {"messages": [system,
user, assistant, ...]} per line, the assistant's message "Action: <answer>"
or math's worked solution ending in "#### <answer>": the prompt is the
system and user messages, the expected action the one the first assistant
message holds). It
prints one JSON object: seconds of the step, of its generation phase and of
its training phase, the tokens of each and tokens/s.

  .venv-peers/bin/python bench/peers/trl_grpo.py --model M.gguf \
      --prompts demos.jsonl --tasks 8 --group 4 --max-tokens 48 \
      --rank 16 --lr 2e-5 --threads 2

Settings (read from TRL 1.16.0's GRPOConfig and GRPOTrainer):
  num_generations = --group, the whole batch of tasks x group completions
  generated in one call (generation_batch_size = per_device_train_batch_size
  x gradient_accumulation_steps, steps_per_generation defaulting to the
  latter); max_steps = 1 (one optimisation step); num_iterations = 1;
  beta = 0 (no reference model, no KL); temperature 1, top_p 1, top_k 0
  (plain sampling, as agentrl's rollouts); epsilon (clip) 0.2; TRL's default
  loss_type ("dapo": token-level) and scale_rewards ("group"); AdamW at --lr
  with transformers' defaults (betas 0.9/0.999, eps 1e-8, no weight decay,
  gradient norm clipped to 1, as agentrl's trainer); F32 on the CPU (bf16
  and fp16 off, use_cpu); no evaluation, no saving, no logging
  (report_to none, logging_strategy no). Gradient checkpointing, on by
  default in TRL, is off: at this size nothing needs it, and agentrl's
  trainer does not recompute activations either (--gradient-checkpointing
  turns it on). The micro-batch (per_device_train_batch_size) is the
  largest divisor of tasks x group whose padded prompt + completion tokens
  fit --batch-tokens (agentrl's lora.batch_tokens, 4096), so both sides
  take one optimiser step over micro-batches of about the same size.

Reward: 1 when the completion's action equals the expected action, else 0.
The action is what follows the last "Action:" (on its line), or else the
last non-empty line, as agentrl's envs.ParseAction reads it; both sides
are compared after stripping.

How the phases are timed: a trainer callback stamps on_step_begin and
on_step_end, which transformers' training loop calls around the one
optimisation step (after the batch is fetched, before the first
micro-batch; after optimizer.step and zero_grad). GRPOTrainer generates
inside the step, in _generate_and_score_completions (called from
_prepare_inputs on the first micro-batch), which is wrapped with a timer:
generate_s is its time (tokenising the prompts, model.generate of the whole
batch, decoding, the reward function, group advantages); train_s is the
step's time less generate_s (forward and backward of the loss over the
micro-batches, gradient clipping, the AdamW step); seconds is the step.
sampling_s, inside generate_s, is model.generate alone (the wrapped
_generate_single_turn). Tokens: generated_tokens are the completion
tokens (to the first EOS, included, or max_completion_length);
train_tokens are the prompt + completion tokens of every sequence the
loss runs on (padding not counted; padded_train_tokens counts it).

One JSON object goes to stdout; errors go to stderr with exit status 1
(bad flags or a bad prompts file: 2).
"""

import argparse
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
import traceback

# torch is imported in main, after the thread settings are in the
# environment: its OpenMP pool reads them once, at import.

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


class PromptsError(ValueError):
    """A prompts file that cannot be used as given."""


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="GGUF model file (any architecture transformers' GGUF loader reads)")
    p.add_argument("--prompts", required=True, metavar="FILE", help="demonstrations as `agentrl envs demos` writes them (JSON lines)")
    p.add_argument("--tasks", type=int, default=0, help="prompts of the step: the file's first N (default: all)")
    p.add_argument("--group", type=int, default=4, help="completions per prompt (num_generations)")
    p.add_argument("--max-tokens", type=int, default=48, help="max_completion_length")
    p.add_argument("--rank", type=int, default=16, help="LoRA rank")
    p.add_argument("--alpha", type=float, default=0, help="LoRA alpha (default: 2 x rank, agentrl's default)")
    p.add_argument("--lr", type=float, default=2e-5, help="AdamW learning rate")
    p.add_argument("--clip", type=float, default=0.2, help="PPO clip range (epsilon)")
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="CPU threads for torch (default: one per core)")
    p.add_argument("--seed", type=int, default=1, help="seed of the LoRA initialisation and the sampling")
    p.add_argument("--batch-tokens", type=int, default=4096, help="padded tokens per micro-batch, at most (sets per_device_train_batch_size)")
    p.add_argument("--micro-batch", type=int, default=0, help="per_device_train_batch_size (default: from --batch-tokens)")
    p.add_argument("--gradient-checkpointing", action="store_true", help="TRL's default; off unless given")
    args = p.parse_args(argv)
    if min(args.group - 1, args.max_tokens, args.rank, args.threads, args.batch_tokens) < 1 or args.tasks < 0 or args.micro_batch < 0:
        p.error("--group must be at least 2; --max-tokens, --rank, --threads and --batch-tokens positive")
    if not args.lr > 0 or args.alpha < 0 or not args.clip > 0:
        p.error("--lr and --clip must be positive, --alpha not negative")
    if args.alpha == 0:
        args.alpha = 2.0 * args.rank
    return args


def set_threads(n):
    """Puts the thread count where torch's OpenMP and BLAS pools read it;
    must run before torch is imported."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(n)


def action_of(text):
    """The action in a reply, as agentrl's envs.ParseAction reads it: what
    follows the last word "action" + optional blanks + ":" (on its line, or
    the next non-empty one), else the last non-empty line; stripped of
    blanks and quotes."""
    lower = text.lower()
    marker = -1
    end = len(lower)
    while end > 0:
        i = lower.rfind("action", 0, end)
        if i < 0:
            break
        j = i + len("action")
        while j < len(lower) and lower[j] in " \t":
            j += 1
        if j < len(lower) and lower[j] == ":" and (i == 0 or not (lower[i - 1].isalnum() or lower[i - 1] == "_")):
            marker = j + 1
            break
        end = i
    if marker >= 0:
        rest = text[marker:]
        line, nl, _ = rest.partition("\n")
        if nl and not line.strip():
            line = next((l for l in rest.split("\n") if l.strip()), "")
    else:
        line = next((l for l in reversed(text.split("\n")) if l.strip()), "")
    return line.strip().strip("`\"'")


def read_prompts(path, tasks):
    """[{"prompt": [system, user], "answer": expected action}] from a
    demonstrations file."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                msgs = json.loads(line)["messages"]
            except (ValueError, KeyError, TypeError) as e:
                raise PromptsError("%s:%d: want {\"messages\": [...]} (%s)" % (path, n, e))
            if (len(msgs) < 3 or [m.get("role") for m in msgs[:3]] != ["system", "user", "assistant"]
                    or not all(isinstance(m.get("content"), str) for m in msgs[:3])):
                raise PromptsError("%s:%d: want system, user and assistant messages first" % (path, n))
            rows.append({"prompt": [{"role": m["role"], "content": m["content"]} for m in msgs[:2]],
                         "answer": action_of(msgs[2]["content"])})
    if not rows:
        raise PromptsError("%s: no demonstrations" % path)
    if tasks:
        if tasks > len(rows):
            raise PromptsError("%s: %d demonstrations, %d tasks asked for" % (path, len(rows), tasks))
        rows = rows[:tasks]
    return rows


def action_reward(completions, answer, **_):
    """1 when the completion's action is the expected one, else 0."""
    out = []
    for completion, want in zip(completions, answer):
        text = completion[0]["content"] if isinstance(completion, list) else completion
        out.append(1.0 if action_of(text) == want.strip() else 0.0)
    return out


def micro_batch_size(total, longest, batch_tokens):
    """The largest divisor of total whose padded rows fit batch_tokens (1 at least)."""
    best = 1
    for d in range(1, total + 1):
        if total % d == 0 and d * longest <= batch_tokens:
            best = d
    return best


def unmark_dequantized(torch, model):
    """Lets transformers' Trainer train a GGUF model that was dequantised.

    transformers 5.23's GGUF loader (its legacy path, the one taken without
    the `kernels` package) dequantises every weight into ordinary F32
    nn.Linear layers, yet leaves its GGUF quantizer attached to the model,
    and the Trainer refuses to train any model with a quantizer whose
    method "does not support training". Once every parameter is checked to
    be a plain F32 tensor, the quantizer's own remove_quantization_config
    (what the loader does itself when it dequantises on its newer path)
    drops the marker. Anything still packed is an error."""
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is None:
        return
    packed = [n for n, m in model.named_modules() if type(m).__module__.startswith("transformers.integrations.gguf")]
    not_f32 = [n for n, p in model.named_parameters() if p.dtype != torch.float32 or type(p) is not torch.nn.Parameter]
    if packed or not_f32:
        raise RuntimeError("the GGUF loader kept %d packed modules and %d non-F32 parameters (e.g. %s); "
                           "this script needs every weight dequantised" % (len(packed), len(not_f32), (packed + not_f32)[:3]))
    quantizer.remove_quantization_config(model)


def run(args, rows):
    import torch
    import transformers
    import peft
    import trl
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    torch.set_num_threads(args.threads)
    versions = {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
                "peft": peft.__version__, "trl": trl.__version__}

    path = os.path.abspath(args.model)
    if not os.path.isfile(path):
        raise FileNotFoundError("model %s not found" % path)
    start = time.perf_counter()
    directory, name = os.path.dirname(path), os.path.basename(path)
    model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name, dtype=torch.float32)
    unmark_dequantized(torch, model)
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name, padding_side="left", truncation_side="left")
    if not tokenizer.chat_template:
        raise RuntimeError("%s: the tokenizer has no chat template" % path)

    # The micro-batch: padded rows of the longest prompt + max completion.
    longest = max(len(tokenizer.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"])
                  for r in rows)
    total = len(rows) * args.group
    micro = args.micro_batch or micro_batch_size(total, longest + args.max_tokens, args.batch_tokens)
    if total % micro:
        raise PromptsError("--micro-batch %d does not divide %d tasks x %d completions" % (micro, len(rows), args.group))

    out_dir = tempfile.mkdtemp(prefix="trl-grpo-")
    config = GRPOConfig(
        output_dir=out_dir,
        # One optimisation step over the whole batch of tasks x group
        # completions, generated together.
        max_steps=1,
        num_train_epochs=1,
        per_device_train_batch_size=micro,
        gradient_accumulation_steps=total // micro,
        num_generations=args.group,
        num_iterations=1,
        max_completion_length=args.max_tokens,
        shuffle_dataset=False,
        # Sampling as agentrl's rollouts: temperature 1, nothing cut.
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        # The objective.
        beta=0.0,
        epsilon=args.clip,
        learning_rate=args.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        # F32 on the CPU.
        use_cpu=True,
        bf16=False,
        fp16=False,
        # TRL's default is gradient_checkpointing=True (transformers 5.23
        # renamed it activation_checkpointing, the name that wins).
        activation_checkpointing=args.gradient_checkpointing,
        # Nothing else.
        eval_strategy="no",
        save_strategy="no",
        logging_strategy="no",
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
        seed=args.seed,
        data_seed=args.seed,
    )
    lora = LoraConfig(r=args.rank, lora_alpha=args.alpha, lora_dropout=0.0, bias="none",
                      target_modules=LORA_TARGETS, task_type="CAUSAL_LM")
    rewards = []

    def reward(completions, answer, **kw):
        r = action_reward(completions, answer, **kw)
        rewards.extend(r)
        return r

    reward.__name__ = "action_reward"

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.begin = self.end = None

        def on_step_begin(self, *_, **__):
            self.begin = time.perf_counter()

        def on_step_end(self, *_, **__):
            self.end = time.perf_counter()

    timer = StepTimer()
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=config, train_dataset=Dataset.from_list(rows),
                          processing_class=tokenizer, peft_config=lora, callbacks=[timer])

    phase = {"generate_s": 0.0, "sampling_s": 0.0, "generated_tokens": 0, "train_tokens": 0, "padded_train_tokens": 0,
             "prompt_tokens": 0, "completions": 0}
    generate_and_score = trainer._generate_and_score_completions
    generate_single_turn = trainer._generate_single_turn

    def timed_generate_and_score(inputs):
        t = time.perf_counter()
        out = generate_and_score(inputs)
        phase["generate_s"] += time.perf_counter() - t
        prompt, completion = out["prompt_mask"], out["completion_mask"]
        phase["generated_tokens"] += int(completion.sum())
        phase["prompt_tokens"] += int(prompt.sum())
        phase["train_tokens"] += int(prompt.sum()) + int(completion.sum())
        phase["padded_train_tokens"] += prompt.numel() + completion.numel()
        phase["completions"] += completion.size(0)
        return out

    def timed_generate_single_turn(*a, **kw):
        t = time.perf_counter()
        out = generate_single_turn(*a, **kw)
        phase["sampling_s"] += time.perf_counter() - t
        return out

    trainer._generate_and_score_completions = timed_generate_and_score
    trainer._generate_single_turn = timed_generate_single_turn
    load_s = time.perf_counter() - start

    train_start = time.perf_counter()
    result = trainer.train()
    train_call_s = time.perf_counter() - train_start
    if timer.begin is None or timer.end is None or trainer.state.global_step != 1:
        raise RuntimeError("the trainer did not take exactly one optimisation step (global step %d)" % trainer.state.global_step)
    seconds = timer.end - timer.begin
    train_s = seconds - phase["generate_s"]
    trainable = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
    flat = 0
    for k in range(0, len(rewards), args.group):
        flat += len(set(rewards[k:k + args.group])) == 1
    return {
        "seconds": seconds,
        "generate_s": phase["generate_s"],
        "train_s": train_s,
        "generated_tokens": phase["generated_tokens"],
        "train_tokens": phase["train_tokens"],
        "generate_tok_s": phase["generated_tokens"] / phase["generate_s"],
        "train_tok_s": phase["train_tokens"] / train_s,
        "versions": versions,
        "sampling_s": phase["sampling_s"],
        "padded_train_tokens": phase["padded_train_tokens"],
        "mean_prompt_tokens": phase["prompt_tokens"] / max(phase["completions"], 1),
        "completions": phase["completions"],
        "tasks": len(rows),
        "group": args.group,
        "micro_batch": micro,
        "gradient_accumulation_steps": total // micro,
        "reward": sum(rewards) / max(len(rewards), 1),
        "flat_groups": flat,
        "loss": result.training_loss,
        "trainable_parameters": trainable,
        "load_s": load_s,
        "train_call_s": train_call_s,
        "threads": args.threads,
        "settings": {"rank": args.rank, "alpha": args.alpha, "lr": args.lr, "clip": args.clip, "max_tokens": args.max_tokens,
                     "seed": args.seed, "loss_type": config.loss_type, "scale_rewards": config.scale_rewards,
                     "gradient_checkpointing": config.activation_checkpointing, "dtype": "float32"},
    }


def main(argv):
    args = parse_args(argv)
    try:
        rows = read_prompts(args.prompts, args.tasks)
    except (OSError, PromptsError) as e:
        print("trl_grpo: %s" % e, file=sys.stderr)
        return 2
    set_threads(args.threads)
    try:
        # transformers' printer callback and warnings would mix with the
        # report: everything but the report goes to stderr.
        with contextlib.redirect_stdout(sys.stderr):
            report = run(args, rows)
    except PromptsError as e:
        print("trl_grpo: %s" % e, file=sys.stderr)
        return 2
    except Exception:  # noqa: BLE001 - the caller shows stderr; exit 1 says it failed
        traceback.print_exc()
        return 1
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
