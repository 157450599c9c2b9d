package initmodel

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm/bpe"
	"github.com/agentrl/agentrl/llm/gguf"
)

// small is a quick configuration for tests: a tiny shape and vocabulary.
func small(t *testing.T) Config {
	t.Helper()
	return Config{
		VocabSize:         400,
		EmbeddingLength:   64,
		BlockCount:        2,
		FeedForwardLength: 96,
		HeadCount:         4,
		HeadCountKV:       2,
		Corpus:            []string{Corpus()[:60000]},
	}
}

func writeModel(t *testing.T, cfg Config) (string, Summary) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.gguf")
	s, err := Write(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return path, s
}

func open(t *testing.T, path string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The default tiny model has the preset's shape, a parameter count that
// matches its tensors, and every key llama.cpp's llama loader reads, with
// the types it expects.
func TestWriteTiny(t *testing.T) {
	path, s := writeModel(t, Config{})
	f := open(t, path)
	if s.Preset != "tiny" || s.Layers != 4 || s.EmbeddingLength != 256 || s.HeadCountKV != 2 || !s.TiedOutput {
		t.Errorf("summary %+v", s)
	}
	if s.Parameters < 1e6 || s.Parameters > 5e6 {
		t.Errorf("%d parameters, want 1-5 M", s.Parameters)
	}
	if err := f.CheckLlamaMetadata(); err != nil {
		t.Error(err)
	}
	if st, _ := os.Stat(path); st.Size() != s.FileSize || f.Size != s.FileSize {
		t.Errorf("file size %d, summary %d", st.Size(), s.FileSize)
	}
	var elements int64
	for _, ti := range f.Tensors {
		elements += ti.Elements()
	}
	if elements != s.Parameters {
		t.Errorf("tensors hold %d values, summary says %d parameters", elements, s.Parameters)
	}

	want := map[string]any{
		"general.architecture":                   "llama",
		"general.name":                           "agentrl-tiny",
		"general.file_type":                      uint32(0),
		"llama.vocab_size":                       uint32(s.VocabSize),
		"llama.context_length":                   uint32(1024),
		"llama.embedding_length":                 uint32(256),
		"llama.block_count":                      uint32(4),
		"llama.feed_forward_length":              uint32(704),
		"llama.attention.head_count":             uint32(4),
		"llama.attention.head_count_kv":          uint32(2),
		"llama.rope.dimension_count":             uint32(64),
		"llama.rope.freq_base":                   float32(10000),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"tokenizer.ggml.model":                   "gpt2",
		"tokenizer.ggml.pre":                     bpe.PreTokenizer,
		"tokenizer.ggml.add_bos_token":           true,
		"tokenizer.ggml.add_eos_token":           false,
		"tokenizer.chat_template":                ChatTemplate,
	}
	for key, v := range want {
		got, ok := f.Lookup(key)
		if !ok || got != v {
			t.Errorf("%s = %#v, want %#v", key, got, v)
		}
	}

	tok, err := bpe.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Len() != s.VocabSize || len(tok.Merges()) != s.Merges {
		t.Errorf("tokenizer has %d tokens, %d merges; summary %d, %d", tok.Len(), len(tok.Merges()), s.VocabSize, s.Merges)
	}
	ids := map[string]string{
		"tokenizer.ggml.bos_token_id":     TokenBOS,
		"tokenizer.ggml.eos_token_id":     TokenEOS,
		"tokenizer.ggml.padding_token_id": TokenPad,
		"tokenizer.ggml.eot_token_id":     TokenIMEnd,
	}
	for key, text := range ids {
		id, err := f.GetUint32(key)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := tok.Lookup(text); int32(id) != want || tok.Types()[id] != bpe.TokenControl {
			t.Errorf("%s = %d, want control token %q (%d)", key, id, text, want)
		}
	}
	// The built-in corpus teaches the tokenizer the words of agent tasks.
	for _, word := range []string{"Action", " search", " click", "Observation", " cabinet"} {
		if n := len(tok.Encode(word, false)); n != 1 {
			t.Errorf("%q takes %d tokens", word, n)
		}
	}
}

func TestTensorLayout(t *testing.T) {
	cfg := small(t)
	cfg.SeparateOutput = true
	path, s := writeModel(t, cfg)
	f := open(t, path)
	v := int64(s.VocabSize)
	want := map[string][]int64{
		"token_embd.weight":  {64, v},
		"output_norm.weight": {64},
		"output.weight":      {64, v},
	}
	for i := range 2 {
		blk := func(n string) string { return fmt.Sprintf("blk.%d.%s.weight", i, n) }
		want[blk("attn_norm")] = []int64{64}
		want[blk("attn_q")] = []int64{64, 64}
		want[blk("attn_k")] = []int64{64, 32}
		want[blk("attn_v")] = []int64{64, 32}
		want[blk("attn_output")] = []int64{64, 64}
		want[blk("ffn_norm")] = []int64{64}
		want[blk("ffn_gate")] = []int64{64, 96}
		want[blk("ffn_up")] = []int64{64, 96}
		want[blk("ffn_down")] = []int64{96, 64}
	}
	if len(f.Tensors) != len(want) {
		t.Errorf("%d tensors, want %d", len(f.Tensors), len(want))
	}
	for name, shape := range want {
		ti, ok := f.Tensor(name)
		if !ok || !slices.Equal(ti.Shape, shape) || ti.Type != gguf.TensorF32 {
			t.Errorf("%s: %+v, want shape %v f32", name, ti, shape)
		}
	}
	if s.TiedOutput || s.Parameters != cfg.Parameters(s.VocabSize) {
		t.Errorf("summary %+v", s)
	}
}

func stats(values []float32) (mean, std float64) {
	for _, v := range values {
		mean += float64(v)
	}
	mean /= float64(len(values))
	for _, v := range values {
		std += (float64(v) - mean) * (float64(v) - mean)
	}
	return mean, math.Sqrt(std / float64(len(values)))
}

func TestInitialisation(t *testing.T) {
	path, _ := writeModel(t, Config{Preset: "tiny", Corpus: []string{Corpus()[:60000]}})
	f := open(t, path)
	residual := InitStd / math.Sqrt(8)
	for name, wantStd := range map[string]float64{
		"token_embd.weight":        InitStd,
		"blk.0.attn_q.weight":      InitStd,
		"blk.3.ffn_up.weight":      InitStd,
		"blk.1.attn_output.weight": residual,
		"blk.2.ffn_down.weight":    residual,
	} {
		values, err := f.TensorFloat32(name)
		if err != nil {
			t.Fatal(err)
		}
		mean, std := stats(values)
		if math.Abs(mean) > 3*wantStd/math.Sqrt(float64(len(values))) || math.Abs(std/wantStd-1) > 0.02 {
			t.Errorf("%s: mean %.5f std %.5f, want 0 and %.5f", name, mean, std, wantStd)
		}
	}
	for _, name := range []string{"blk.0.attn_norm.weight", "blk.3.ffn_norm.weight", "output_norm.weight"} {
		values, _ := f.TensorFloat32(name)
		for _, v := range values {
			if v != 1 {
				t.Fatalf("%s has %g, want all ones", name, v)
			}
		}
	}
	q, _ := f.TensorFloat32("blk.0.attn_q.weight")
	k, _ := f.TensorFloat32("blk.0.attn_k.weight")
	if slices.Equal(q[:100], k[:100]) {
		t.Error("tensors share their random values")
	}
}

func TestDeterministic(t *testing.T) {
	cfg := small(t)
	a, _ := writeModel(t, cfg)
	b, _ := writeModel(t, cfg)
	cfg.Seed = 1
	c, _ := writeModel(t, cfg)
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	dc, _ := os.ReadFile(c)
	if !bytes.Equal(da, db) {
		t.Fatal("the same configuration wrote different files")
	}
	if bytes.Equal(da, dc) || len(da) != len(dc) {
		t.Fatal("another seed should change the weights and nothing else")
	}
	fa, fc := open(t, a), open(t, c)
	ta, _ := fa.GetStrings(bpe.KeyTokens)
	tc, _ := fc.GetStrings(bpe.KeyTokens)
	if !slices.Equal(ta, tc) {
		t.Fatal("the seed changed the tokenizer")
	}
}

func TestWeightTypes(t *testing.T) {
	for _, name := range []string{"f16", "bf16", "q8_0"} {
		typ, err := ParseType(name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := small(t)
		cfg.Type = typ
		path, s := writeModel(t, cfg)
		f := open(t, path)
		if ft, _ := f.GetUint32("general.file_type"); ft != fileTypes[typ] || s.Type != name {
			t.Errorf("%s: file type %d, summary type %s", name, ft, s.Type)
		}
		if ti, _ := f.Tensor("blk.0.ffn_down.weight"); ti.Type != typ {
			t.Errorf("%s: matrix stored as %s", name, ti.Type)
		}
		if ti, _ := f.Tensor("blk.0.ffn_norm.weight"); ti.Type != gguf.TensorF32 {
			t.Errorf("%s: norm stored as %s", name, ti.Type)
		}
		values, err := f.TensorFloat32("token_embd.weight")
		if err != nil {
			t.Fatal(err)
		}
		if _, std := stats(values); math.Abs(std/InitStd-1) > 0.03 {
			t.Errorf("%s: std %.5f", name, std)
		}
	}
	if _, err := ParseType("q4_0"); err == nil {
		t.Error("ParseType accepted q4_0")
	}
}

// A Q4_K model stores its matrices as Q4_K where their rows are whole
// blocks of 256 values and as Q8_0 elsewhere.
func TestQ4KFallsBackToQ8(t *testing.T) {
	cfg := small(t)
	cfg.Type, cfg.EmbeddingLength, cfg.HeadCount, cfg.HeadCountKV, cfg.FeedForwardLength = gguf.TensorQ4_K, 256, 4, 2, 352
	path, s := writeModel(t, cfg)
	f := open(t, path)
	if s.Type != "q4_K" {
		t.Errorf("summary type %s", s.Type)
	}
	for name, want := range map[string]gguf.TensorType{
		"token_embd.weight":     gguf.TensorQ4_K,
		"blk.0.attn_q.weight":   gguf.TensorQ4_K,
		"blk.0.ffn_up.weight":   gguf.TensorQ4_K,
		"blk.0.ffn_down.weight": gguf.TensorQ8_0, // rows of 352
	} {
		if ti, _ := f.Tensor(name); ti.Type != want {
			t.Errorf("%s stored as %s, want %s", name, ti.Type, want)
		}
	}
	values, err := f.TensorFloat32("blk.0.attn_q.weight")
	if err != nil {
		t.Fatal(err)
	}
	if _, std := stats(values); math.Abs(std/InitStd-1) > 0.1 {
		t.Errorf("q4_K weights: std %.5f, want about %.5f", std, InitStd)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := map[string]struct {
		edit func(c *Config)
		msg  string
	}{
		"preset":         {func(c *Config) { c.Preset = "huge" }, `unknown preset "huge"`},
		"vocab low":      {func(c *Config) { c.VocabSize = 100 }, "vocabulary size 100 out of range"},
		"vocab high":     {func(c *Config) { c.VocabSize = 1 << 20 }, "out of range"},
		"heads":          {func(c *Config) { c.HeadCount = 5 }, "heads of even size"},
		"odd head size":  {func(c *Config) { c.HeadCount = 64 }, "heads of even size"},
		"kv heads":       {func(c *Config) { c.HeadCountKV = 3 }, "not a multiple of the KV head count"},
		"q8_0 rows":      {func(c *Config) { c.Type = gguf.TensorQ8_0; c.FeedForwardLength = 100 }, "multiples"},
		"type":           {func(c *Config) { c.Type = gguf.TensorQ4_0 }, "not supported"},
		"negative layer": {func(c *Config) { c.BlockCount = -1 }, "block count -1 out of range"},
		"empty corpus":   {func(c *Config) { c.Corpus = []string{"", ""} }, "corpus is empty"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := small(t)
			c.edit(&cfg)
			path := filepath.Join(t.TempDir(), "m.gguf")
			_, err := Write(path, cfg)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want %q", err, c.msg)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("a file was written despite the error")
			}
		})
	}
	if _, err := Write(filepath.Join(t.TempDir(), "missing", "m.gguf"), small(t)); err == nil {
		t.Error("wrote into a missing directory")
	}
}

func TestPresetSizes(t *testing.T) {
	for _, p := range []struct {
		name   string
		lo, hi float64
	}{{"tiny", 1e6, 5e6}, {"small", 20e6, 60e6}} {
		cfg, err := Config{Preset: p.name}.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		for _, separate := range []bool{false, true} {
			cfg.SeparateOutput = separate
			if n := float64(cfg.Parameters(cfg.VocabSize)); n < p.lo || n > p.hi {
				t.Errorf("%s (separate output %v): %.1f M parameters", p.name, separate, n/1e6)
			}
		}
	}
}

func TestCorpus(t *testing.T) {
	c := Corpus()
	if len(c) < CorpusSize || len(c) > CorpusSize+10000 {
		t.Errorf("corpus of %d bytes", len(c))
	}
	if c != Corpus() {
		t.Error("corpus differs between calls")
	}
	for _, s := range []string{"Action: search[", "Action: click[", "Observation:", "Thought:", "> go to ", "Question 1:", "$", "Answer:", "Customer:"} {
		if !strings.Contains(c, s) {
			t.Errorf("corpus lacks %q", s)
		}
	}
}

func BenchmarkWriteTiny(b *testing.B) {
	path := filepath.Join(b.TempDir(), "m.gguf")
	Corpus()
	for b.Loop() {
		if _, err := Write(path, Config{}); err != nil {
			b.Fatal(err)
		}
	}
}
