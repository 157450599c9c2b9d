package llm

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm/gguf"
)

// TestQuantize quantises the tiny model as llama-quantize would: Q4_K_M
// mixes types (Q6_K for some matrices; rows of 704 values, not whole
// 256-blocks, fall back to a 32-block type), norms stay F32, and the
// result loads and generates.
func TestQuantize(t *testing.T) {
	out := filepath.Join(t.TempDir(), "q4km.gguf")
	if err := Quantize(testModelPath, out, "Q4_K_M", 1); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]gguf.TensorType{}
	for _, ti := range f.Tensors {
		types[ti.Name] = ti.Type
	}
	f.Close()
	t.Logf("types: attn_q %s, attn_v %s, ffn_down %s, ffn_norm %s", types["blk.0.attn_q.weight"], types["blk.0.attn_v.weight"], types["blk.0.ffn_down.weight"], types["blk.0.ffn_norm.weight"])
	if types["blk.0.attn_q.weight"] != gguf.TensorQ4_K || types["blk.0.ffn_norm.weight"] != gguf.TensorF32 {
		t.Errorf("attn_q %s, ffn_norm %s: want q4_K and f32", types["blk.0.attn_q.weight"], types["blk.0.ffn_norm.weight"])
	}
	if d := types["blk.0.ffn_down.weight"]; d.BlockSize() != 32 {
		t.Errorf("ffn_down (rows of 704) is %s, want a type of 32-value blocks", d)
	}
	if c := generateOne(t, oneSequenceEngine(t, out), "Task: buy a lamp.", greedy(8)); len(c.Tokens) == 0 {
		t.Error("the quantised model generated nothing")
	}
}

// TestQuantizeDequantises: a quantised model written as f16 has F16
// matrices and F32 norms, and scores a text as the quantised model does,
// to the F16 rounding of its values.
func TestQuantizeDequantises(t *testing.T) {
	dir := t.TempDir()
	q8, f16 := filepath.Join(dir, "q8.gguf"), filepath.Join(dir, "f16.gguf")
	if err := Quantize(testModelPath, q8, "q8_0", 1); err != nil {
		t.Fatal(err)
	}
	if err := Quantize(q8, f16, "f16", 1); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(f16)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range f.Tensors {
		if want := map[bool]gguf.TensorType{true: gguf.TensorF32, false: gguf.TensorF16}[len(ti.Shape) == 1]; ti.Type != want {
			t.Errorf("%s: %s, want %s", ti.Name, ti.Type, want)
		}
	}
	f.Close()
	scores := func(path string) []float32 {
		res, err := oneSequenceEngine(t, path).Score(context.Background(), []ScoreRequest{{Prompt: testPrompts[0], Continuation: " then search for a red lamp and buy it"}}, CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res[0].LogProbs
	}
	a, b := scores(q8), scores(f16)
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%d and %d log-probabilities", len(a), len(b))
	}
	for k := range a {
		if d := math.Abs(float64(a[k] - b[k])); d > 2e-2 {
			t.Errorf("token %d: log-prob %g as q8_0, %g dequantised to f16", k, a[k], b[k])
		}
	}
}

// oneSequenceEngine loads the model at path with an engine of one
// sequence of 128 tokens on one thread, closed when the test ends.
func oneSequenceEngine(t *testing.T, path string) *Engine {
	t.Helper()
	m, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	e, err := m.NewEngine(EngineOptions{Parallel: 1, Context: 128, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func TestQuantizeRejects(t *testing.T) {
	dir := t.TempDir()
	q8 := filepath.Join(dir, "q8.gguf")
	if err := Quantize(testModelPath, q8, "q8_0", 1); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.gguf")
	os.WriteFile(garbage, []byte("GGUF garbage"), 0o644)
	for name, tc := range map[string]struct{ in, typ, want string }{
		"unknown type":   {testModelPath, "q4_7", `unknown type "q4_7"`},
		"requantising":   {q8, "q4_0", "already q8_0"},
		"to bf16":        {q8, "bf16", "dequantise it with type f16 or f32"},
		"missing file":   {filepath.Join(dir, "none.gguf"), "q4_0", "no such file"},
		"not a GGUF":     {garbage, "q4_0", "quantize"},
		"missing folder": {testModelPath, "q4_0", "no such file or directory"},
	} {
		out := filepath.Join(dir, "out.gguf")
		if name == "missing folder" {
			out = filepath.Join(dir, "none", "out.gguf")
		}
		err := Quantize(tc.in, out, tc.typ, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: an output file was left", name)
		}
	}
}
