package train

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/llm/gguf"
)

// Architectures the trainer builds graphs for: the llama family (Llama 2
// and 3, Mistral-style models, which llama.cpp also calls "llama"), qwen2
// (biases on q, k and v) and qwen3 (RMS norms on q and k heads).
var Architectures = []string{"llama", "qwen2", "qwen3"}

// weightTypes are the element types of base weights the trainer reads:
// every type common in published GGUF files (a Q4_K_M or Q5_K_M file
// mixes several of them). The forward pass multiplies by them in their
// stored type, with ggml's kernels, as llama.cpp does.
var weightTypes = map[gguf.TensorType]bool{
	gguf.TensorF32: true, gguf.TensorF16: true, gguf.TensorBF16: true,
	gguf.TensorQ8_0: true, gguf.TensorQ4_0: true, gguf.TensorQ4_1: true, gguf.TensorQ5_0: true, gguf.TensorQ5_1: true,
	gguf.TensorQ2_K: true, gguf.TensorQ3_K: true, gguf.TensorQ4_K: true, gguf.TensorQ5_K: true, gguf.TensorQ6_K: true,
	// llama.cpp's fall-back for Q2_K and Q3_K matrices whose rows are not
	// whole 256-blocks.
	gguf.TensorIQ4_NL: true,
}

// weightTypeNames lists weightTypes for error messages.
const weightTypeNames = "f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_K, q3_K, q4_K, q5_K, q6_K and iq4_nl"

// cpuOnlyWeightTypes are weight types ggml's CUDA backend cannot gather
// rows of (the token embedding) or convert to F32 (the transposed copies),
// both of which abort the process there.
var cpuOnlyWeightTypes = map[gguf.TensorType]bool{
	gguf.TensorQ2_K: true, gguf.TensorQ3_K: true, gguf.TensorQ4_K: true, gguf.TensorQ5_K: true, gguf.TensorQ6_K: true,
	gguf.TensorIQ4_NL: true,
}

// quantized reports whether t is a quantised type, which full-parameter
// training can only start from after dequantising it.
func quantized(t gguf.TensorType) bool {
	return t != gguf.TensorF32 && t != gguf.TensorF16 && t != gguf.TensorBF16
}

// baseFloat32 reads a base tensor as float32, dequantised with ggml's own
// routine for its type: the values its kernels compute with.
func baseFloat32(f *gguf.File, name string) ([]float32, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", gguf.ErrNoTensor, name)
	}
	if !quantized(t.Type) {
		return f.TensorFloat32(name)
	}
	raw, err := f.TensorData(name)
	if err != nil {
		return nil, err
	}
	values, err := cgo.Dequantize(cgo.Type(t.Type), raw)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	return values, nil
}

// hparams are the hyperparameters of a model, read from its GGUF metadata
// as llama.cpp reads them.
type hparams struct {
	Arch     string
	Vocab    int
	Embd     int
	Layers   int
	FF       int
	Heads    int
	HeadsKV  int
	HeadDim  int // size of one attention head (key and value)
	CtxTrain int
	NormEps  float32
	KQScale  float32 // attention logit scale, 1/sqrt(HeadDim) unless the model sets it
	Rope     cgo.Rope
	QKNorm   bool // qwen3: RMS norm on each query and key head
}

func (h hparams) qDim() int  { return h.Heads * h.HeadDim }
func (h hparams) kvDim() int { return h.HeadsKV * h.HeadDim }

// readHParams reads and checks the hyperparameters.
func readHParams(f *gguf.File) (hparams, error) {
	h := hparams{Arch: f.Architecture()}
	supported := false
	for _, a := range Architectures {
		supported = supported || a == h.Arch
	}
	if !supported {
		return h, fmt.Errorf("unsupported architecture %q (the trainer supports %s)", h.Arch, strings.Join(Architectures, ", "))
	}
	key := func(k string) string { return h.Arch + "." + k }
	ints := []struct {
		key      string
		dst      *int
		required bool
	}{
		{"embedding_length", &h.Embd, true},
		{"block_count", &h.Layers, true},
		{"feed_forward_length", &h.FF, true},
		{"attention.head_count", &h.Heads, true},
		{"attention.head_count_kv", &h.HeadsKV, false},
		{"attention.key_length", &h.HeadDim, false},
		{"context_length", &h.CtxTrain, true},
	}
	for _, it := range ints {
		v, ok, err := metaInt(f, key(it.key))
		if err != nil {
			return h, err
		}
		if !ok && it.required {
			return h, fmt.Errorf("metadata key %s is missing", key(it.key))
		}
		if ok {
			*it.dst = v
		}
	}
	if h.HeadsKV == 0 {
		h.HeadsKV = h.Heads
	}
	if h.Embd <= 0 || h.Layers <= 0 || h.FF <= 0 || h.Heads <= 0 || h.HeadsKV <= 0 || h.Heads%h.HeadsKV != 0 {
		return h, fmt.Errorf("inconsistent shape: embedding %d, %d layers, feed-forward %d, %d heads, %d KV heads", h.Embd, h.Layers, h.FF, h.Heads, h.HeadsKV)
	}
	if h.HeadDim == 0 {
		if h.Embd%h.Heads != 0 {
			return h, fmt.Errorf("embedding length %d is not a multiple of the head count %d", h.Embd, h.Heads)
		}
		h.HeadDim = h.Embd / h.Heads
	}
	if v, ok, _ := metaInt(f, key("attention.value_length")); ok && v != h.HeadDim {
		return h, fmt.Errorf("key length %d differs from value length %d: unsupported", h.HeadDim, v)
	}
	var err error
	if h.NormEps, err = metaFloat(f, key("attention.layer_norm_rms_epsilon"), 0); err != nil {
		return h, err
	}
	if h.NormEps <= 0 {
		return h, fmt.Errorf("metadata key %s is missing or not positive", key("attention.layer_norm_rms_epsilon"))
	}
	if h.KQScale, err = metaFloat(f, key("attention.scale"), 0); err != nil {
		return h, err
	}
	if h.KQScale == 0 {
		h.KQScale = float32(1 / math.Sqrt(float64(h.HeadDim)))
	}
	if h.Rope, err = readRope(f, h); err != nil {
		return h, err
	}
	h.QKNorm = h.Arch == "qwen3"
	return h, nil
}

// readRope reads the rotary-embedding parameters as llama.cpp derives its
// context parameters from them.
func readRope(f *gguf.File, h hparams) (cgo.Rope, error) {
	key := func(k string) string { return h.Arch + ".rope." + k }
	r := cgo.Rope{Mode: cgo.RopeNormal, Dims: h.HeadDim, NCtxOrig: h.CtxTrain, AttnFactor: 1, BetaFast: 32, BetaSlow: 1, FreqScale: 1}
	if h.Arch == "qwen2" || h.Arch == "qwen3" {
		r.Mode = cgo.RopeNeoX
	}
	if v, ok, err := metaInt(f, key("dimension_count")); err != nil {
		return r, err
	} else if ok && v != h.HeadDim {
		return r, fmt.Errorf("rotary dimensions %d differ from the head size %d: unsupported", v, h.HeadDim)
	}
	var err error
	if r.FreqBase, err = metaFloat(f, key("freq_base"), 10000); err != nil {
		return r, err
	}
	if v, ok, err := metaInt(f, key("scaling.original_context_length")); err != nil {
		return r, err
	} else if ok {
		r.NCtxOrig = v
	}
	scaling := "linear"
	if s, err := f.GetString(key("scaling.type")); err == nil {
		scaling = s
	} else if !errors.Is(err, gguf.ErrNoKey) {
		return r, err
	}
	factor, err := metaFloat(f, key("scaling.factor"), 0)
	if err != nil {
		return r, err
	}
	if factor == 0 {
		if factor, err = metaFloat(f, key("scale_linear"), 0); err != nil {
			return r, err
		}
	}
	if factor != 0 {
		r.FreqScale = 1 / factor
	}
	if r.AttnFactor, err = metaFloat(f, key("scaling.attn_factor"), 1); err != nil {
		return r, err
	}
	switch scaling {
	case "none":
		r.FreqScale = 1
	case "linear":
	case "yarn":
		if _, ok := f.Lookup(key("scaling.yarn_log_multiplier")); ok {
			return r, errors.New("YaRN with a log multiplier is not supported")
		}
		// llama.cpp's YaRN magnitude scale, 1 + 0.1 ln(factor), cancels
		// with its correction for ggml's own, leaving the attention factor.
		r.ExtFactor = 1
	default:
		return r, fmt.Errorf("RoPE scaling %q is not supported (want none, linear or yarn)", scaling)
	}
	return r, nil
}

func metaInt(f *gguf.File, key string) (int, bool, error) {
	v, ok := f.Lookup(key)
	if !ok {
		return 0, false, nil
	}
	switch n := v.(type) {
	case uint32:
		return int(n), true, nil
	case int32:
		return int(n), true, nil
	case uint64:
		return int(min(n, math.MaxInt32)), true, nil
	case int64:
		return int(n), true, nil
	}
	return 0, false, fmt.Errorf("metadata key %s is not an integer (per-layer values are not supported)", key)
}

func metaFloat(f *gguf.File, key string, def float32) (float32, error) {
	v, ok := f.Lookup(key)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case float32:
		return x, nil
	case float64:
		return float32(x), nil
	}
	return 0, fmt.Errorf("metadata key %s is not a float", key)
}

// tensorSpec is a base tensor the architecture needs, with its shape in
// ggml order.
type tensorSpec struct {
	name     string
	shape    []int64
	matrix   bool // a weight matrix (kept in its stored type); else F32
	optional bool
}

// blockName names a tensor of layer i.
func blockName(i int, s string) string { return fmt.Sprintf("blk.%d.%s", i, s) }

// tensorSpecs lists the tensors of the architecture.
func tensorSpecs(h hparams) []tensorSpec {
	e, v, q, kv, ff := int64(h.Embd), int64(h.Vocab), int64(h.qDim()), int64(h.kvDim()), int64(h.FF)
	specs := []tensorSpec{
		{name: "token_embd.weight", shape: []int64{e, v}, matrix: true},
		{name: "output_norm.weight", shape: []int64{e}},
		{name: "output.weight", shape: []int64{e, v}, matrix: true, optional: true},
		{name: "output.bias", shape: []int64{v}, optional: true},
		{name: "rope_freqs.weight", shape: []int64{int64(h.HeadDim / 2)}, optional: true},
	}
	for i := range h.Layers {
		b := func(s string, shape []int64, matrix bool) {
			specs = append(specs, tensorSpec{name: blockName(i, s), shape: shape, matrix: matrix})
		}
		b("attn_norm.weight", []int64{e}, false)
		b("attn_q.weight", []int64{e, q}, true)
		b("attn_k.weight", []int64{e, kv}, true)
		b("attn_v.weight", []int64{e, kv}, true)
		b("attn_output.weight", []int64{q, e}, true)
		// qwen2 has biases on q, k and v; llama-family conversions may
		// carry them too, and an output bias.
		bias := func(s string, n int64, required bool) {
			specs = append(specs, tensorSpec{name: blockName(i, s), shape: []int64{n}, optional: !required})
		}
		bias("attn_q.bias", q, h.Arch == "qwen2")
		bias("attn_k.bias", kv, h.Arch == "qwen2")
		bias("attn_v.bias", kv, h.Arch == "qwen2")
		bias("attn_output.bias", e, false)
		if h.QKNorm {
			b("attn_q_norm.weight", []int64{int64(h.HeadDim)}, false)
			b("attn_k_norm.weight", []int64{int64(h.HeadDim)}, false)
		}
		b("ffn_norm.weight", []int64{e}, false)
		b("ffn_gate.weight", []int64{e, ff}, true)
		b("ffn_up.weight", []int64{e, ff}, true)
		b("ffn_down.weight", []int64{ff, e}, true)
	}
	return specs
}

// checkTensors checks that the file holds every tensor the architecture
// needs, with the right shapes and supported types, and no tensor the
// graph would silently ignore.
func checkTensors(f *gguf.File, h hparams, specs []tensorSpec) error {
	known := map[string]bool{}
	for _, s := range specs {
		known[s.name] = true
		t, ok := f.Tensor(s.name)
		if !ok {
			if s.optional {
				continue
			}
			return fmt.Errorf("tensor %s is missing", s.name)
		}
		if !slices.Equal(t.Shape, s.shape) {
			return fmt.Errorf("tensor %s has shape %v, want %v", s.name, t.Shape, s.shape)
		}
		if !weightTypes[t.Type] {
			return fmt.Errorf("tensor %s has unsupported weight type %s (the trainer reads %s)", s.name, t.Type, weightTypeNames)
		}
	}
	for _, t := range f.Tensors {
		if !known[t.Name] {
			return fmt.Errorf("tensor %s is not part of the %s architecture the trainer builds: unsupported model", t.Name, h.Arch)
		}
	}
	return nil
}

// openModel opens and checks a GGUF model for training.
func openModel(path string) (*gguf.File, hparams, []tensorSpec, error) {
	f, err := gguf.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, hparams{}, nil, fmt.Errorf("model %s: no such file", path)
		}
		return nil, hparams{}, nil, fmt.Errorf("model %s: %w", path, err)
	}
	fail := func(err error) (*gguf.File, hparams, []tensorSpec, error) {
		f.Close()
		return nil, hparams{}, nil, fmt.Errorf("model %s: %w", path, err)
	}
	if typ, _ := f.GetString("general.type"); typ != "" && typ != "model" {
		return fail(fmt.Errorf("the file is a GGUF %s, not a model", typ))
	}
	h, err := readHParams(f)
	if err != nil {
		return fail(err)
	}
	embd, ok := f.Tensor("token_embd.weight")
	if !ok || len(embd.Shape) != 2 {
		return fail(errors.New("tensor token_embd.weight is missing or not a matrix"))
	}
	h.Vocab = int(embd.Shape[1])
	specs := tensorSpecs(h)
	if err := checkTensors(f, h, specs); err != nil {
		return fail(err)
	}
	return f, h, specs, nil
}
