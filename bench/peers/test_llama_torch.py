"""Tests of llama_torch and torch_lora.py on small random models written here.

The forward pass is checked against a plain per-token, per-head NumPy
implementation of llama.cpp's graph (float64) for the llama, qwen2 and qwen3
architectures; the LoRA against merging B A into the weight; torch_lora.py's
training run against its JSON contract. Parity with llama.cpp itself is
test_parity.py's job.

    /usr/bin/python3 -m unittest discover -s bench/peers -p 'test_*.py'
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gguffile  # noqa: E402
import llama_torch  # noqa: E402

VOCAB, EMBD, HEADS, KV_HEADS, FF, LAYERS, CONTEXT = 19, 16, 4, 2, 24, 2, 64
HEAD_DIM = EMBD // HEADS
EPS, ROPE_BASE = 1e-5, 10000.0


def make_model(path, arch, seed=0, tied=True):
    """Writes a random model of architecture arch and returns its weights."""
    rng = np.random.default_rng(seed)

    def mat(n_out, n_in):
        return rng.normal(0, 0.4, (n_out, n_in)).astype(np.float32)

    def norm(n):
        return rng.uniform(0.5, 1.5, n).astype(np.float32)

    w = {"token_embd.weight": mat(VOCAB, EMBD), "output_norm.weight": norm(EMBD)}
    if not tied:
        w["output.weight"] = mat(VOCAB, EMBD)
    kv = KV_HEADS * HEAD_DIM
    for i in range(LAYERS):
        p = "blk.%d." % i
        w.update({
            p + "attn_norm.weight": norm(EMBD),
            p + "attn_q.weight": mat(EMBD, EMBD),
            p + "attn_k.weight": mat(kv, EMBD),
            p + "attn_v.weight": mat(kv, EMBD),
            p + "attn_output.weight": mat(EMBD, EMBD),
            p + "ffn_norm.weight": norm(EMBD),
            p + "ffn_gate.weight": mat(FF, EMBD),
            p + "ffn_up.weight": mat(FF, EMBD),
            p + "ffn_down.weight": mat(EMBD, FF),
        })
        if arch == "qwen2":
            for t, n in (("attn_q", EMBD), ("attn_k", kv), ("attn_v", kv)):
                w[p + t + ".bias"] = rng.normal(0, 0.5, n).astype(np.float32)
        if arch == "qwen3":
            w[p + "attn_q_norm.weight"] = norm(HEAD_DIM)
            w[p + "attn_k_norm.weight"] = norm(HEAD_DIM)
    u32, f32 = gguffile.GGUF_UINT32, gguffile.GGUF_FLOAT32
    metadata = [
        ("general.architecture", gguffile.GGUF_STRING, arch, None),
        (arch + ".context_length", u32, CONTEXT, None),
        (arch + ".embedding_length", u32, EMBD, None),
        (arch + ".block_count", u32, LAYERS, None),
        (arch + ".feed_forward_length", u32, FF, None),
        (arch + ".attention.head_count", u32, HEADS, None),
        (arch + ".attention.head_count_kv", u32, KV_HEADS, None),
        (arch + ".attention.layer_norm_rms_epsilon", f32, EPS, None),
        (arch + ".rope.freq_base", f32, ROPE_BASE, None),
    ]
    gguffile.write(path, metadata, list(w.items()))
    return {k: v.astype(np.float64) for k, v in w.items()}


def reference_logits(w, arch, ids):
    """llama.cpp's graph, one token and one head at a time, in float64."""

    def rms_norm(x, weight):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * weight

    def rope(x, pos):
        out = x.copy()
        for i in range(HEAD_DIM // 2):
            theta = pos * ROPE_BASE ** (-2.0 * i / HEAD_DIM)
            # normal mode pairs (2i, 2i+1); NeoX mode pairs (i, i + d/2)
            a, b = (2 * i, 2 * i + 1) if arch == "llama" else (i, i + HEAD_DIM // 2)
            out[..., a] = x[..., a] * np.cos(theta) - x[..., b] * np.sin(theta)
            out[..., b] = x[..., a] * np.sin(theta) + x[..., b] * np.cos(theta)
        return out

    n = len(ids)
    x = w["token_embd.weight"][ids]
    for i in range(LAYERS):
        p = "blk.%d." % i
        h = rms_norm(x, w[p + "attn_norm.weight"])
        q = h @ w[p + "attn_q.weight"].T + w.get(p + "attn_q.bias", 0)
        k = h @ w[p + "attn_k.weight"].T + w.get(p + "attn_k.bias", 0)
        v = h @ w[p + "attn_v.weight"].T + w.get(p + "attn_v.bias", 0)
        q, k, v = q.reshape(n, HEADS, HEAD_DIM), k.reshape(n, KV_HEADS, HEAD_DIM), v.reshape(n, KV_HEADS, HEAD_DIM)
        if arch == "qwen3":
            q = rms_norm(q, w[p + "attn_q_norm.weight"])
            k = rms_norm(k, w[p + "attn_k_norm.weight"])
        for t in range(n):
            q[t], k[t] = rope(q[t], t), rope(k[t], t)
        attn = np.zeros((n, HEADS, HEAD_DIM))
        for hd in range(HEADS):
            kv = hd // (HEADS // KV_HEADS)
            for t in range(n):
                s = np.array([q[t, hd] @ k[u, kv] for u in range(t + 1)]) / np.sqrt(HEAD_DIM)
                pr = np.exp(s - s.max())
                pr /= pr.sum()
                attn[t, hd] = pr @ v[:t + 1, kv]
        x = x + attn.reshape(n, EMBD) @ w[p + "attn_output.weight"].T
        h = rms_norm(x, w[p + "ffn_norm.weight"])
        g = h @ w[p + "ffn_gate.weight"].T
        x = x + (g / (1 + np.exp(-g)) * (h @ w[p + "ffn_up.weight"].T)) @ w[p + "ffn_down.weight"].T
    out = w.get("output.weight", w["token_embd.weight"])
    return rms_norm(x, w["output_norm.weight"]) @ out.T


class LlamaTorchTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.ids = [3, 17, 0, 5, 5, 11, 2, 18, 7, 1, 9, 4]

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def forward(self, model):
        with torch.no_grad():
            return model.forward(torch.tensor([self.ids]))[0].double().numpy()

    def test_forward_matches_reference(self):
        for arch, tied in (("llama", True), ("llama", False), ("qwen2", True), ("qwen3", False)):
            with self.subTest(arch=arch, tied=tied):
                path = self.path("%s-%s.gguf" % (arch, tied))
                w = make_model(path, arch, tied=tied)
                model = llama_torch.Llama(path)
                self.assertEqual(model.config.rope_type, "norm" if arch == "llama" else "neox")
                self.assertEqual(model.config.tied_output, tied)
                want = reference_logits(w, arch, self.ids)
                np.testing.assert_allclose(self.forward(model), want, atol=2e-4, rtol=0)

    def test_rope_mode_matters(self):
        # The reference check above must be able to fail: the other rotary
        # mode gives clearly different logits on this model.
        path = self.path("m.gguf")
        w = make_model(path, "llama")
        model = llama_torch.Llama(path)
        model.config.rope_type = "neox"
        diff = np.abs(self.forward(model) - reference_logits(w, "llama", self.ids)).max()
        self.assertGreater(diff, 1e-2)

    def test_lora_is_w_plus_scaled_ba(self):
        path = self.path("m.gguf")
        w = make_model(path, "llama")
        model = llama_torch.Llama(path)
        base = self.forward(model)
        rank, alpha = 4, 6.0
        params = model.add_lora(["q", "v", "down"], rank, alpha, torch.Generator().manual_seed(1))
        self.assertEqual(len(params), 2 * 3 * LAYERS)
        # B starts at zero: the adapted model is the base model.
        np.testing.assert_array_equal(self.forward(model), base)

        merged = dict(w)
        rng = np.random.default_rng(2)
        for name, (a, b) in model.lora.items():
            self.assertEqual(tuple(a.shape), (rank, model.weights[name].shape[1]))
            self.assertEqual(tuple(b.shape), (model.weights[name].shape[0], rank))
            with torch.no_grad():
                b.copy_(torch.from_numpy(rng.normal(0, 0.3, tuple(b.shape))))
            merged[name] = w[name] + alpha / rank * b.detach().double().numpy() @ a.detach().double().numpy()
        self.assertEqual(sorted(model.lora), sorted("blk.%d.%s.weight" % (i, t) for i in range(LAYERS) for t in ("attn_q", "attn_v", "ffn_down")))
        np.testing.assert_allclose(self.forward(model), reference_logits(merged, "llama", self.ids), atol=2e-4, rtol=0)

    def test_adapter_round_trip(self):
        path = self.path("m.gguf")
        make_model(path, "llama")
        model = llama_torch.Llama(path)
        model.add_lora(["k", "up"], 3, 5.0, torch.Generator().manual_seed(1))
        with torch.no_grad():
            for _, b in model.lora.values():
                b.normal_(0, 0.3)
        want = self.forward(model)
        adapter = self.path("a.gguf")
        model.save_lora(adapter, 5.0)
        with gguffile.GGUFFile(adapter) as g:
            self.assertEqual(g.metadata["general.type"], "adapter")
            self.assertEqual(g.metadata["adapter.type"], "lora")
            self.assertEqual(g.metadata["adapter.lora.alpha"], 5.0)
            # llama.cpp's convention: lora_a is ggml [n_in, r], lora_b [r, n_out].
            self.assertEqual(g.tensors["blk.0.ffn_up.weight.lora_a"].ne, [EMBD, 3])
            self.assertEqual(g.tensors["blk.0.ffn_up.weight.lora_b"].ne, [3, FF])

        loaded = llama_torch.Llama(path)
        params, rank, alpha = loaded.load_lora(adapter)
        self.assertEqual((len(params), rank, alpha), (4 * LAYERS, 3, 5.0))
        self.assertTrue(all(p.requires_grad for p in params))
        np.testing.assert_array_equal(self.forward(loaded), want)

        other = self.path("other.gguf")
        make_model(other, "qwen2")
        with self.assertRaisesRegex(gguffile.GGUFError, "general.architecture is 'llama', want 'qwen2'"):
            llama_torch.Llama(other).load_lora(adapter)
        with self.assertRaisesRegex(gguffile.GGUFError, "general.type is None, want 'adapter'"):
            llama_torch.Llama(path).load_lora(path)
        with gguffile.GGUFFile(adapter) as g:
            tensors = [(n, g.array(n)) for n in g.tensors]
            metadata = g.metadata_entries()
        transposed = self.path("transposed.gguf")
        gguffile.write(transposed, metadata, [(n, a.T.copy() if n.endswith("lora_a") else a) for n, a in tensors])
        with self.assertRaisesRegex(gguffile.GGUFError, "do not fit the weight"):
            llama_torch.Llama(path).load_lora(transposed)

    def test_bf16_close_to_f32(self):
        # --dtype bf16 (the GPU benchmark's setting) keeps biases, norms and
        # the residual stream in F32: its logits stay within bf16 rounding.
        path = self.path("m.gguf")
        make_model(path, "qwen2", tied=False)
        f32 = self.forward(llama_torch.Llama(path))
        model = llama_torch.Llama(path, dtype=torch.bfloat16)
        self.assertEqual(model.weights["blk.0.attn_q.weight"].dtype, torch.bfloat16)
        self.assertEqual(model.weights["blk.0.attn_q.bias"].dtype, torch.float32)
        model.add_lora(llama_torch.DEFAULT_TARGETS, 2, 2.0, torch.Generator().manual_seed(0))
        bf16 = self.forward(model)
        self.assertLess(np.abs(bf16 - f32).max(), 0.05 * np.abs(f32).max())

    def run_cli(self, *args):
        res = subprocess.run([sys.executable, os.path.join(HERE, "torch_lora.py")] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return res.returncode, res.stdout, res.stderr

    def test_cli_training(self):
        path = self.path("m.gguf")
        make_model(path, "qwen2")
        for mode in ([], ["--full"]):
            with self.subTest(mode=mode):
                args = ["--model", path, "--batch", "3", "--seq-len", "16", "--steps", "6", "--lr", "1e-2", "--seed", "4", "--threads", "1"] + mode
                rc, out, err = self.run_cli(*args)
                self.assertEqual(rc, 0, err)
                d = json.loads(out)
                self.assertEqual(d["architecture"], "qwen2")
                self.assertEqual(d["config"]["mode"], "full" if mode else "lora")
                self.assertEqual(len(d["losses"]), 6)
                self.assertEqual(len(d["step_seconds"]), 6)
                self.assertEqual(d["timed_steps"], 5)
                self.assertEqual(d["tokens"], 3 * 16 * 5)
                self.assertAlmostEqual(d["tokens_per_second"], d["tokens"] / d["seconds"], places=6)
                self.assertAlmostEqual(d["seconds"], sum(d["step_seconds"][1:]), places=9)
                self.assertEqual(d["device"], "cpu")
                self.assertLess(d["final_loss"], d["losses"][0] - 0.1)
                n_lora = LAYERS * 8 * ((EMBD + EMBD) * 2 + (EMBD + KV_HEADS * HEAD_DIM) * 2 + (EMBD + FF) * 3)
                self.assertEqual(d["trainable_parameters"], d["parameters"] if mode else n_lora)
                # The same seed gives the same losses.
                rc, again, err = self.run_cli(*args)
                self.assertEqual(json.loads(again)["losses"], d["losses"])

    def test_cli_continues_from_saved_adapter(self):
        path, adapter = self.path("m.gguf"), self.path("a.gguf")
        make_model(path, "llama")
        common = ["--model", path, "--batch", "2", "--seq-len", "8", "--lr", "1e-2", "--threads", "1", "--rank", "2", "--alpha", "3", "--targets", "q,o,gate"]
        rc, out, err = self.run_cli(*common, "--steps", "3", "--save-adapter", adapter)
        self.assertEqual(rc, 0, err)
        first = json.loads(out)
        rc, out, err = self.run_cli(*common, "--steps", "2", "--adapter", adapter)
        self.assertEqual(rc, 0, err)
        second = json.loads(out)
        # Same batch, the saved adapter: the second run starts where the first ended.
        self.assertAlmostEqual(second["losses"][0], first["final_loss"], places=5)
        self.assertEqual(second["config"]["targets"], ["q", "o", "gate"])
        self.assertEqual((second["config"]["rank"], second["config"]["alpha"]), (2, 3.0))
        self.assertEqual(second["trainable_parameters"], first["trainable_parameters"])

    def test_cli_tokens_file_and_logprobs(self):
        path = self.path("m.gguf")
        w = make_model(path, "llama")
        tokens = self.path("tokens.json")
        with open(tokens, "w") as f:
            json.dump([self.ids, list(reversed(self.ids))], f)
        rc, out, err = self.run_cli("--model", path, "--tokens", tokens, "--steps", "2", "--threads", "1")
        self.assertEqual(rc, 0, err)
        d = json.loads(out)
        self.assertEqual((d["config"]["batch"], d["config"]["seq_len"]), (2, len(self.ids) - 1))
        # The first loss is the base model's mean cross-entropy on the file.
        losses = []
        for seq in (self.ids, list(reversed(self.ids))):
            logits = reference_logits(w, "llama", seq)
            lp = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) - logits.max(-1, keepdims=True)
            losses += [-lp[t, seq[t + 1]] for t in range(len(seq) - 1)]
        self.assertAlmostEqual(d["losses"][0], float(np.mean(losses)), places=4)

        rc, out, err = self.run_cli("--model", path, "--logprobs", ",".join(map(str, self.ids)))
        self.assertEqual(rc, 0, err)
        got = json.loads(out)["logprobs"]
        self.assertEqual(len(got), len(self.ids) - 1)
        np.testing.assert_allclose(got, [-x for x in losses[:len(self.ids) - 1]], atol=1e-4)

    def test_cli_errors(self):
        path = self.path("m.gguf")
        make_model(path, "llama")
        for args, want in (
            (["--model", self.path("none.gguf")], "No such file"),
            (["--model", path, "--seq-len", str(CONTEXT + 1)], "exceeds the model's context"),
            (["--model", path, "--seq-len", "8", "--targets", "q,qq"], "unknown target 'qq'"),
            (["--model", path, "--logprobs", "1,%d" % VOCAB], "outside the vocabulary"),
            (["--model", path, "--steps", "1"], "must exceed --warmup"),
        ):
            with self.subTest(args=args):
                rc, out, err = self.run_cli(*args)
                self.assertNotEqual(rc, 0)
                self.assertEqual(out, "")
                self.assertIn(want, err)
        unsupported = self.path("gpt2.gguf")
        with gguffile.GGUFFile(path) as g:
            metadata = [(k, vt, "gpt2" if k == "general.architecture" else v, et) for k, vt, v, et in g.metadata_entries()]
            gguffile.write(unsupported, metadata, [(n, g.array(n)) for n in g.tensors])
        rc, out, err = self.run_cli("--model", unsupported, "--steps", "2")
        self.assertNotEqual(rc, 0)
        self.assertIn("architecture 'gpt2' not supported", err)


if __name__ == "__main__":
    unittest.main()
