package train

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/gguf"
	"github.com/agentrl/agentrl/llm/initmodel"
)

// testDir holds the models the package's tests share, made once.
var testDir string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "train-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testDir = dir
	return m.Run()
}

// microConfig is a model small enough for gradient checks and quick
// training runs, with grouped-query attention (4 heads, 2 KV heads).
func microConfig(seed uint64) initmodel.Config {
	return initmodel.Config{Preset: "tiny", Seed: seed, VocabSize: 300, ContextLength: 128,
		EmbeddingLength: 64, BlockCount: 2, FeedForwardLength: 128, HeadCount: 4, HeadCountKV: 2}
}

// makeModel writes a model once per name and returns its path.
func makeModel(t testing.TB, name string, cfg initmodel.Config) string {
	t.Helper()
	path := filepath.Join(testDir, name+".gguf")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if _, err := initmodel.Write(path, cfg); err != nil {
		t.Fatal(err)
	}
	return path
}

// quantizeModel writes src quantised to typ with llama.cpp's quantiser,
// once per name, and returns its path.
func quantizeModel(t testing.TB, src, typ string) string {
	t.Helper()
	dst := strings.TrimSuffix(src, ".gguf") + "-" + typ + ".gguf"
	if _, err := os.Stat(dst); err == nil {
		return dst
	}
	if err := llm.Quantize(src, dst, typ, 1); err != nil {
		t.Fatal(err)
	}
	return dst
}

// convertArch rewrites a llama model as another architecture: the same
// weights under the arch's metadata keys, plus what that architecture
// adds, drawn at random: q, k and v biases (qwen2) or per-head q and k
// norm weights (qwen3).
func convertArch(t testing.TB, src, arch string) string {
	t.Helper()
	dst := strings.TrimSuffix(src, ".gguf") + "-" + arch + ".gguf"
	if _, err := os.Stat(dst); err == nil {
		return dst
	}
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.Metadata {
		key, value := kv.Key, kv.Value
		if rest, ok := strings.CutPrefix(key, "llama."); ok {
			key = arch + "." + rest
		}
		if key == "general.architecture" {
			value = arch
		}
		w.Set(key, value)
	}
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.AddTensor(ti.Name, ti.Type, ti.Shape, data)
	}
	random := func(name string, n int64, mean, std float64) {
		h := fnv.New64a()
		h.Write([]byte(name))
		rng := rand.New(rand.NewPCG(1, h.Sum64()))
		values := make([]float32, n)
		for i := range values {
			values[i] = float32(mean + std*rng.NormFloat64())
		}
		raw, _ := gguf.EncodeFloat32(gguf.TensorF32, values)
		w.AddTensor(name, gguf.TensorF32, []int64{n}, raw)
	}
	layers, _ := f.GetUint32("llama.block_count")
	for i := range int(layers) {
		q, _ := f.Tensor(blockName(i, "attn_q.weight"))
		k, _ := f.Tensor(blockName(i, "attn_k.weight"))
		heads, _ := f.GetUint32("llama.attention.head_count")
		switch arch {
		case "qwen2":
			random(blockName(i, "attn_q.bias"), q.Shape[1], 0, 0.05)
			random(blockName(i, "attn_k.bias"), k.Shape[1], 0, 0.05)
			random(blockName(i, "attn_v.bias"), k.Shape[1], 0, 0.2)
		case "qwen3":
			hd := q.Shape[1] / int64(heads)
			random(blockName(i, "attn_q_norm.weight"), hd, 1, 0.3)
			random(blockName(i, "attn_k_norm.weight"), hd, 1, 0.3)
		}
	}
	if _, err := w.WriteFile(dst); err != nil {
		t.Fatal(err)
	}
	return dst
}
