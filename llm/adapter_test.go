package llm

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm/gguf"
	"github.com/agentrl/agentrl/llm/initmodel"
)

// writeTestAdapter writes a LoRA adapter for the test model on every
// layer's attention query and FFN up projection with random A and B (B
// zero when zeroB).
func writeTestAdapter(t *testing.T, arch string, zeroB bool) string {
	t.Helper()
	return writeAdapter(t, testModelPath, testModel.Info().Layers, arch, []string{"attn_q", "ffn_up"}, zeroB)
}

// writeAdapter writes a LoRA adapter for the model file on the targets of
// every layer, in llama.cpp's layout: A is [n_in, r], B is [r, n_out] in
// ggml order.
func writeAdapter(t *testing.T, modelPath string, layers int, arch string, targets []string, zeroB bool) string {
	t.Helper()
	const rank = 4
	f, err := gguf.Open(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	w.Set("general.type", "adapter")
	w.Set("general.architecture", arch)
	w.Set("adapter.type", "lora")
	w.Set("adapter.lora.alpha", float32(rank))
	rng := rand.New(rand.NewPCG(3, 4))
	randn := func(n int, scale float64) []byte {
		v := make([]float32, n)
		for i := range v {
			if scale != 0 {
				v[i] = float32(rng.NormFloat64() * scale)
			}
		}
		b, err := gguf.EncodeFloat32(gguf.TensorF32, v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bScale := 0.5
	if zeroB {
		bScale = 0
	}
	for l := 0; l < layers; l++ {
		for _, name := range targets {
			base := "blk." + strconv.Itoa(l) + "." + name + ".weight"
			ti, ok := f.Tensor(base)
			if !ok {
				t.Fatalf("model has no %s", base)
			}
			nIn, nOut := ti.Shape[0], ti.Shape[1]
			w.AddTensor(base+".lora_a", gguf.TensorF32, []int64{nIn, rank}, randn(int(nIn*rank), 0.1))
			w.AddTensor(base+".lora_b", gguf.TensorF32, []int64{rank, nOut}, randn(int(nOut*rank), bScale))
		}
	}
	path := filepath.Join(t.TempDir(), "adapter.gguf")
	if _, err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func scoreWith(t *testing.T, e *Engine, adapters []AdapterScale) []float32 {
	t.Helper()
	res, err := e.Score(context.Background(), []ScoreRequest{{Prompt: "Task: put a clean mug in the coffeemachine.", Continuation: " Action: go to countertop 1"}}, CallOptions{Adapters: adapters})
	if err != nil {
		t.Fatal(err)
	}
	return res[0].LogProbs
}

func maxDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

func TestAdapterChangesLogitsAndScaleZeroRestoresThem(t *testing.T) {
	e := newTestEngine(t, EngineOptions{Parallel: 2})
	a, err := testModel.LoadAdapter(writeTestAdapter(t, testModel.Info().Architecture, false))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	zero, err := testModel.LoadAdapter(writeTestAdapter(t, testModel.Info().Architecture, true))
	if err != nil {
		t.Fatal(err)
	}
	defer zero.Close()

	base := scoreWith(t, e, nil)
	with := scoreWith(t, e, []AdapterScale{{a, 1}})
	if d := maxDiff(base, with); d < 1e-3 {
		t.Fatalf("adapter with non-zero B changed log-probs by only %g", d)
	}
	if d := maxDiff(base, scoreWith(t, e, []AdapterScale{{a, 0}})); d > 1e-6 {
		t.Fatalf("scale 0 should restore the base model, differs by %g", d)
	}
	if d := maxDiff(base, scoreWith(t, e, []AdapterScale{{zero, 1}})); d > 1e-6 {
		t.Fatalf("adapter with B = 0 should not change the model, differs by %g", d)
	}
	// Switching back and forth needs no reload and is repeatable.
	if d := maxDiff(with, scoreWith(t, e, []AdapterScale{{a, 1}})); d > 1e-6 {
		t.Fatalf("re-activating the adapter gave different log-probs (%g)", d)
	}
	if d := maxDiff(base, scoreWith(t, e, nil)); d > 1e-6 {
		t.Fatalf("deactivating the adapter did not restore the base model (%g)", d)
	}
}

func TestAdapterForAnotherArchitectureIsRejected(t *testing.T) {
	_, err := testModel.LoadAdapter(writeTestAdapter(t, "qwen2", false))
	if err == nil {
		t.Fatal("adapter made for qwen2 accepted by a llama model")
	}
	t.Log(err)
}

// TestAdapterTooLargeForTheGraphIsRefused: a model of many small blocks
// (llama.cpp sizes its graphs from the tensor count) with an adapter on
// all seven matrices of each block would make ggml abort the process on
// the first decode; LoadAdapter refuses the adapter with the reason, and
// one on the query projections alone works.
func TestAdapterTooLargeForTheGraphIsRefused(t *testing.T) {
	const layers = 24
	path := filepath.Join(t.TempDir(), "deep.gguf")
	if _, err := initmodel.Write(path, initmodel.Config{Preset: "tiny", Seed: 3, BlockCount: layers, EmbeddingLength: 64, FeedForwardLength: 128, HeadCount: 2, HeadCountKV: 2}); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	all := []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}
	_, err = m.LoadAdapter(writeAdapter(t, path, layers, m.Info().Architecture, all, false))
	if err == nil || !strings.Contains(err.Error(), "changes 168 matrices") || !strings.Contains(err.Error(), "room for") {
		t.Fatalf("want the 168-matrix adapter refused for want of graph room, got %v", err)
	}

	a, err := m.LoadAdapter(writeAdapter(t, path, layers, m.Info().Architecture, []string{"attn_q"}, false))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	e, err := m.NewEngine(EngineOptions{Parallel: 1, Context: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if lp := scoreWith(t, e, []AdapterScale{{Adapter: a, Scale: 1}}); len(lp) == 0 {
		t.Fatal("no log-probabilities with the small adapter")
	}
	// Two of them at once still fit; room for them all is what counts.
	if room := m.adapterRoom(); room < 2*layers || room >= 7*layers {
		t.Fatalf("room for %d matrices: want at least %d and under %d", room, 2*layers, 7*layers)
	}
}

// TestGGMLHashSize: the sizes of ggml's hash sets (ggml_hash_size's table).
func TestGGMLHashSize(t *testing.T) {
	for n, want := range map[int]int{1: 2, 3: 3, 4: 5, 6: 11, 1024: 1031, 1032: 2053, 1744: 2053, 2176: 4099, 4100: 8209} {
		if got := ggmlHashSize(n); got != want {
			t.Errorf("ggmlHashSize(%d) = %d, want %d", n, got, want)
		}
	}
}
