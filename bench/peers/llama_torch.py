"""The llama-family forward pass in PyTorch, as llama.cpp computes it, with LoRA.

Architectures (general.architecture): "llama" (rotary embeddings in
llama.cpp's normal mode: adjacent pairs (2i, 2i+1) rotate together),
"qwen2" (q/k/v biases, NeoX rotary mode: pairs (i, i + n_rot/2)) and
"qwen3" (RMS norms on q and k per head before the rotation, NeoX mode).
Grouped-query attention, tied output (no output.weight: the token embedding
is reused), RMSNorm with the file's epsilon, SwiGLU feed-forward,
rope.freq_base, linear rope scaling and llama3-style rope_freqs factors.

A weight stored in GGUF with ggml dimensions [n_in, n_out] is a torch matrix
of shape (n_out, n_in), applied as F.linear(x, W) = x W^T. A LoRA on W is
W x + (alpha / r) * B (A x) with A of shape (r, n_in) and B of shape
(n_out, r): the same shapes, in torch order, as llama.cpp's adapter tensors
"<name>.lora_a" (ggml [n_in, r]) and "<name>.lora_b" (ggml [r, n_out]).
"""

import math

import numpy as np
import torch
import torch.nn.functional as F

import gguffile

# Rotary mode per architecture, as llama.cpp's llama_model_rope_type assigns it.
ROPE_TYPES = {"llama": "norm", "qwen2": "neox", "qwen3": "neox"}

# LoRA targets by their short names and the GGUF tensor each names in a block.
TARGET_TENSORS = {
    "q": "attn_q",
    "k": "attn_k",
    "v": "attn_v",
    "o": "attn_output",
    "gate": "ffn_gate",
    "up": "ffn_up",
    "down": "ffn_down",
}
DEFAULT_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")


class ModelConfig:
    """The hyperparameters of a model, read from GGUF metadata."""

    def __init__(self, gguf):
        md = gguf.metadata
        arch = md.get("general.architecture")
        if arch not in ROPE_TYPES:
            raise gguffile.GGUFError("%s: architecture %r not supported (want %s)" % (gguf.path, arch, ", ".join(sorted(ROPE_TYPES))))

        def key(name, default=None):
            full = "%s.%s" % (arch, name)
            if full in md:
                return md[full]
            if default is None:
                raise gguffile.GGUFError("%s: metadata key %s missing" % (gguf.path, full))
            return default

        self.architecture = arch
        self.context_length = int(key("context_length"))
        self.embedding_length = int(key("embedding_length"))
        self.block_count = int(key("block_count"))
        self.feed_forward_length = int(key("feed_forward_length"))
        self.head_count = int(key("attention.head_count"))
        self.head_count_kv = int(key("attention.head_count_kv", self.head_count))
        self.head_dim = int(key("attention.key_length", self.embedding_length // self.head_count))
        if int(key("attention.value_length", self.head_dim)) != self.head_dim:
            raise gguffile.GGUFError("%s: different key and value head sizes are not supported" % gguf.path)
        self.rms_norm_eps = float(key("attention.layer_norm_rms_epsilon"))
        self.rope_type = ROPE_TYPES[arch]
        self.rope_dims = int(key("rope.dimension_count", self.head_dim))
        self.rope_freq_base = float(key("rope.freq_base", 10000.0))
        scaling = key("rope.scaling.type", "none")
        if scaling not in ("none", "linear"):
            raise gguffile.GGUFError("%s: rope scaling %r not supported (want none or linear)" % (gguf.path, scaling))
        factor = float(key("rope.scaling.factor", 0.0))
        self.rope_freq_scale = 1.0 / factor if scaling == "linear" and factor > 0 else 1.0
        self.tied_output = "output.weight" not in gguf.tensors
        self.vocab_size = gguf.tensors["token_embd.weight"].shape[0]
        if self.head_count % self.head_count_kv:
            raise gguffile.GGUFError("%s: head count %d is not a multiple of the KV head count %d" % (gguf.path, self.head_count, self.head_count_kv))
        if self.rope_dims % 2 or self.rope_dims > self.head_dim:
            raise gguffile.GGUFError("%s: rope dimension count %d does not fit heads of %d" % (gguf.path, self.rope_dims, self.head_dim))

    def as_dict(self):
        return {
            "vocab_size": self.vocab_size,
            "context_length": self.context_length,
            "embedding_length": self.embedding_length,
            "block_count": self.block_count,
            "feed_forward_length": self.feed_forward_length,
            "head_count": self.head_count,
            "head_count_kv": self.head_count_kv,
            "head_dim": self.head_dim,
            "rms_norm_eps": self.rms_norm_eps,
            "rope_type": self.rope_type,
            "rope_dims": self.rope_dims,
            "rope_freq_base": self.rope_freq_base,
            "rope_freq_scale": self.rope_freq_scale,
            "tied_output": self.tied_output,
        }


class Llama:
    """A llama-family model: its weights as torch tensors and its forward pass.

    weights maps GGUF tensor names to tensors (the tied output shares the
    token embedding tensor). lora maps the name of each adapted weight to its
    (A, B) pair; add_lora or load_lora fills it, save_lora writes it.
    """

    def __init__(self, path, device="cpu", dtype=torch.float32):
        with gguffile.GGUFFile(path) as g:
            self.config = ModelConfig(g)
            self.weight_type = g.tensors["blk.0.attn_q.weight"].type_name
            self.weights = {}
            for name, t in g.tensors.items():
                # Norm weights, biases and rope factors stay F32 like in
                # llama.cpp; only matrices take the compute dtype.
                tensor_dtype = dtype if len(t.ne) == 2 else torch.float32
                self.weights[name] = torch.from_numpy(np.ascontiguousarray(g.array(name))).to(device=device, dtype=tensor_dtype)
        c = self.config
        self.device = device
        self.n_parameters = sum(w.numel() for w in self.weights.values())
        self.output = self.weights["token_embd.weight"] if c.tied_output else self.weights["output.weight"]
        self.lora = {}
        self.lora_scale = 0.0
        self._rope_cache = {}
        self._mask_cache = {}
        for i in range(c.block_count):
            for short in DEFAULT_TARGETS:
                name = "blk.%d.%s.weight" % (i, TARGET_TENSORS[short])
                if name not in self.weights:
                    raise gguffile.GGUFError("%s: tensor %s missing" % (path, name))

    def add_lora(self, targets, rank, alpha, generator):
        """Adds trainable LoRA pairs on targets of every block and returns them.

        A is uniform in +-1/sqrt(n_in) (PEFT's default, Kaiming-uniform with
        a = sqrt(5)), B is zero, so the adapted model starts as the base
        model; scale is alpha / rank.
        """
        self.lora_scale = alpha / rank
        params = []
        for i in range(self.config.block_count):
            for short in targets:
                name = "blk.%d.%s.weight" % (i, TARGET_TENSORS[short])
                n_out, n_in = self.weights[name].shape
                bound = 1.0 / math.sqrt(n_in)
                a = (torch.rand(rank, n_in, generator=generator) * 2 - 1) * bound
                a = a.to(self.device).requires_grad_()
                b = torch.zeros(n_out, rank, device=self.device, requires_grad=True)
                self.lora[name] = (a, b)
                params += [a, b]
        return params

    def load_lora(self, path):
        """Reads a llama.cpp LoRA adapter (GGUF) as trainable pairs.

        Returns the parameters, the rank and alpha. Every pair must have the
        same rank: the model applies one scale, alpha / rank (1 when the
        file's alpha is 0 or absent, as in llama.cpp).
        """
        with gguffile.GGUFFile(path) as g:
            md = g.metadata
            for key, want in (("general.type", "adapter"), ("adapter.type", "lora"), ("general.architecture", self.config.architecture)):
                if md.get(key) != want:
                    raise gguffile.GGUFError("%s: %s is %r, want %r" % (path, key, md.get(key), want))
            alpha = float(md.get("adapter.lora.alpha", 0.0))
            names = sorted(n[:-len(".lora_a")] for n in g.tensors if n.endswith(".lora_a"))
            if not names or len(names) * 2 != len(g.tensors):
                raise gguffile.GGUFError("%s: want pairs of <weight>.lora_a and <weight>.lora_b tensors" % path)
            rank, params = None, []
            for name in names:
                w = self.weights.get(name)
                if w is None or w.dim() != 2 or name == "token_embd.weight":
                    raise gguffile.GGUFError("%s: %s is not a matrix this model applies a LoRA to" % (path, name))
                a, b = g.array(name + ".lora_a"), g.array(name + ".lora_b")
                r = a.shape[0]
                if a.shape != (r, w.shape[1]) or b.shape != (w.shape[0], r):
                    raise gguffile.GGUFError("%s: %s: lora_a %s and lora_b %s do not fit the weight %s" % (path, name, a.shape, b.shape, tuple(w.shape)))
                if rank is not None and r != rank:
                    raise gguffile.GGUFError("%s: ranks differ (%d and %d)" % (path, rank, r))
                rank = r
                pair = tuple(torch.from_numpy(x.copy()).to(self.device).requires_grad_() for x in (a, b))
                self.lora[name] = pair
                params += pair
        self.lora_scale = alpha / rank if alpha else 1.0
        return params, rank, alpha

    def save_lora(self, path, alpha):
        """Writes the LoRA pairs as a llama.cpp adapter with adapter.lora.alpha alpha."""
        metadata = [
            ("general.architecture", gguffile.GGUF_STRING, self.config.architecture, None),
            ("general.type", gguffile.GGUF_STRING, "adapter", None),
            ("adapter.type", gguffile.GGUF_STRING, "lora", None),
            ("adapter.lora.alpha", gguffile.GGUF_FLOAT32, float(alpha), None),
        ]
        tensors = []
        for name, (a, b) in self.lora.items():
            tensors.append((name + ".lora_a", a.detach().float().cpu().numpy()))
            tensors.append((name + ".lora_b", b.detach().float().cpu().numpy()))
        gguffile.write(path, metadata, tensors)

    def trainable_full(self):
        """Makes every weight trainable (full fine-tuning) and returns them."""
        params = list({id(w): w for w in self.weights.values()}.values())
        for p in params:
            p.requires_grad_()
        return params

    def _linear(self, x, name, bias=None):
        y = F.linear(x, self.weights[name], None if bias is None else bias.to(x.dtype))
        ab = self.lora.get(name)
        if ab is not None:
            a, b = ab
            # Scaling the rank-r intermediate rather than the output costs
            # r instead of n_out multiplications per token.
            y = y + F.linear(F.linear(x, a.to(x.dtype)) * self.lora_scale, b.to(x.dtype))
        return y

    def _rms_norm(self, x, weight):
        x32 = x.float()
        normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.config.rms_norm_eps)
        return (normed * weight).to(x.dtype)

    def _rope_tables(self, n_tokens):
        """The rotation of every position: for the normal mode complex
        e^(i theta) of shape (n_tokens, rope_dims / 2); for NeoX mode cos and
        sin of shape (n_tokens, rope_dims), each repeated over both halves."""
        if n_tokens not in self._rope_cache:
            c = self.config
            # ggml: theta_i = pos * freq_scale * base^(-2i / n_dims) / factor_i
            i = np.arange(c.rope_dims // 2, dtype=np.float64)
            inv_freq = c.rope_freq_base ** (-2.0 * i / c.rope_dims) * c.rope_freq_scale
            if "rope_freqs.weight" in self.weights:
                inv_freq = inv_freq / self.weights["rope_freqs.weight"].double().cpu().numpy()
            theta = np.arange(n_tokens, dtype=np.float64)[:, None] * inv_freq[None, :]
            cos = torch.from_numpy(np.cos(theta)).float().to(self.device)
            sin = torch.from_numpy(np.sin(theta)).float().to(self.device)
            if c.rope_type == "norm":
                self._rope_cache[n_tokens] = torch.complex(cos, sin)
            else:
                self._rope_cache[n_tokens] = (torch.cat((cos, cos), -1), torch.cat((sin, sin), -1))
        return self._rope_cache[n_tokens]

    def _rope(self, x):
        """Rotates x of shape (batch, tokens, heads, head_dim) by position."""
        c = self.config
        if c.rope_dims < c.head_dim:
            return torch.cat((self._rotate(x[..., :c.rope_dims]), x[..., c.rope_dims:]), dim=-1)
        return self._rotate(x)

    def _rotate(self, x):
        table = self._rope_tables(x.shape[1])
        x32 = x.float()
        if self.config.rope_type == "norm":
            # llama.cpp's normal mode rotates adjacent pairs (2i, 2i+1): as
            # the real and imaginary parts of a complex number, that is a
            # product with e^(i theta).
            z = torch.view_as_complex(x32.unflatten(-1, (-1, 2)))
            rot = torch.view_as_real(z * table[None, :, None, :]).flatten(-2)
        else:
            # NeoX mode rotates pairs (i, i + n_rot/2): the two halves.
            cos, sin = table
            x0, x1 = x32.chunk(2, dim=-1)
            rot = x32 * cos[None, :, None, :] + torch.cat((-x1, x0), dim=-1) * sin[None, :, None, :]
        return rot.to(x.dtype)

    def _causal_mask(self, n_tokens):
        """True above the diagonal: the future positions each token must not see."""
        if n_tokens not in self._mask_cache:
            self._mask_cache[n_tokens] = torch.ones(n_tokens, n_tokens, dtype=torch.bool, device=self.device).triu(1)
        return self._mask_cache[n_tokens]

    def _attention(self, q, k, v):
        """Causal attention; q is (B, T, H, d), k and v are (B, T, H_kv, d)."""
        c = self.config
        group = c.head_count // c.head_count_kv
        bsz, n, _, d = q.shape
        q = q.transpose(1, 2)
        # Query head h reads KV head h // group, as ggml's broadcast does.
        k = k.transpose(1, 2)[:, :, None].expand(bsz, c.head_count_kv, group, n, d).reshape(bsz, c.head_count, n, d)
        v = v.transpose(1, 2)[:, :, None].expand(bsz, c.head_count_kv, group, n, d).reshape(bsz, c.head_count, n, d)
        if hasattr(F, "scaled_dot_product_attention"):
            # PyTorch 2's fused attention (flash attention on GPUs); its
            # default scale is 1/sqrt(d), llama's.
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
            scores = scores.masked_fill(self._causal_mask(n), float("-inf"))
            out = torch.matmul(torch.softmax(scores.float(), dim=-1).to(v.dtype), v)
        return out.transpose(1, 2).reshape(bsz, n, c.head_count * d)

    def forward(self, tokens):
        """Logits (B, T, vocab) in float32 for token ids (B, T)."""
        c = self.config
        w = self.weights
        bsz, n = tokens.shape
        x = F.embedding(tokens, w["token_embd.weight"]).float()
        for i in range(c.block_count):
            p = "blk.%d." % i
            h = self._rms_norm(x, w[p + "attn_norm.weight"]).to(w[p + "attn_q.weight"].dtype)
            q = self._linear(h, p + "attn_q.weight", w.get(p + "attn_q.bias")).view(bsz, n, c.head_count, c.head_dim)
            k = self._linear(h, p + "attn_k.weight", w.get(p + "attn_k.bias")).view(bsz, n, c.head_count_kv, c.head_dim)
            v = self._linear(h, p + "attn_v.weight", w.get(p + "attn_v.bias")).view(bsz, n, c.head_count_kv, c.head_dim)
            if p + "attn_q_norm.weight" in w:
                q = self._rms_norm(q, w[p + "attn_q_norm.weight"])
                k = self._rms_norm(k, w[p + "attn_k_norm.weight"])
            attn = self._attention(self._rope(q), self._rope(k), v)
            x = x + self._linear(attn, p + "attn_output.weight", w.get(p + "attn_output.bias")).float()
            h = self._rms_norm(x, w[p + "ffn_norm.weight"]).to(w[p + "ffn_gate.weight"].dtype)
            gated = F.silu(self._linear(h, p + "ffn_gate.weight")) * self._linear(h, p + "ffn_up.weight")
            x = x + self._linear(gated, p + "ffn_down.weight").float()
        h = self._rms_norm(x, w["output_norm.weight"]).to(self.output.dtype)
        bias = w.get("output.bias")
        return F.linear(h, self.output, None if bias is None else bias.to(h.dtype)).float()
