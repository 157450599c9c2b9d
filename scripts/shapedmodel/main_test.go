package main

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm/gguf"
	"github.com/agentrl/agentrl/llm/initmodel"
)

// smallShape is a shape small enough to write in a fraction of a second.
func smallShape() initmodel.Config {
	return initmodel.Config{Preset: "small", EmbeddingLength: 64, BlockCount: 1, FeedForwardLength: 128,
		HeadCount: 4, HeadCountKV: 2, ContextLength: 256, RopeFreqBase: 1e6, RMSNormEpsilon: 1e-6}
}

func TestPaddedVocabularyKeepsTheLearnedModel(t *testing.T) {
	dir := t.TempDir()
	const vocab = 10000
	padded := filepath.Join(dir, "padded.gguf")
	s, err := run(padded, "f32", 7, vocab, smallShape())
	if err != nil {
		t.Fatal(err)
	}
	if s.VocabSize != vocab || s.LearnedTokens >= vocab || s.LearnedTokens < initmodel.MinVocabSize {
		t.Fatalf("summary %+v: want %d tokens, fewer of them learned", s, vocab)
	}
	resolved, _ := smallShape().Resolve()
	// Qwen2's query, key and value biases: 64 + 2 x 32 per block.
	if want := resolved.Parameters(vocab) + 128; s.Parameters != want {
		t.Errorf("parameters %d, want %d (the model maker's and the biases)", s.Parameters, want)
	}

	// The same configuration through the model maker alone: the padded file
	// must hold the same tokenizer and weights, plus the fillers.
	cfg := smallShape()
	cfg.Seed, cfg.Type, cfg.VocabSize = 7, gguf.TensorF32, 8192
	plainPath := filepath.Join(dir, "plain.gguf")
	if _, err := initmodel.Write(plainPath, cfg); err != nil {
		t.Fatal(err)
	}
	plain, err := gguf.Open(plainPath)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	f, err := gguf.Open(padded)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	tokens, _ := f.GetStrings("tokenizer.ggml.tokens")
	types, _ := f.GetInt32s("tokenizer.ggml.token_type")
	learned, _ := plain.GetStrings("tokenizer.ggml.tokens")
	if len(tokens) != vocab || len(types) != vocab || len(learned) != s.LearnedTokens {
		t.Fatalf("%d tokens, %d types, %d learned; want %d, %d, %d", len(tokens), len(types), len(learned), vocab, vocab, s.LearnedTokens)
	}
	for i, tok := range learned {
		if tokens[i] != tok {
			t.Fatalf("token %d is %q, want the learned %q", i, tokens[i], tok)
		}
	}
	if tokens[len(learned)] != "<|extra_0|>" || types[len(learned)] != tokenTypeUnused || types[vocab-1] != tokenTypeUnused {
		t.Errorf("first filler %q of type %d, last of type %d; want <|extra_0|> of type %d", tokens[len(learned)], types[len(learned)], types[vocab-1], tokenTypeUnused)
	}
	if n, _ := f.GetUint32("llama.vocab_size"); n != vocab {
		t.Errorf("llama.vocab_size %d, want %d", n, vocab)
	}
	if err := f.CheckLlamaMetadata(); err != nil {
		t.Errorf("padded metadata: %v", err)
	}

	for _, ti := range plain.Tensors {
		got, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := plain.TensorData(ti.Name)
		if ti.Name != "token_embd.weight" {
			if !bytes.Equal(got, want) {
				t.Errorf("tensor %s differs from the model maker's", ti.Name)
			}
			continue
		}
		info, _ := f.Tensor(ti.Name)
		if info.Shape[0] != 64 || info.Shape[1] != vocab {
			t.Fatalf("token_embd shape %v, want [64 %d]", info.Shape, vocab)
		}
		if !bytes.Equal(got[:len(want)], want) {
			t.Errorf("the learned rows of token_embd differ from the model maker's")
		}
		extra, err := gguf.DecodeFloat32(gguf.TensorF32, got[len(want):])
		if err != nil {
			t.Fatal(err)
		}
		var sum, sq float64
		for _, v := range extra {
			sum += float64(v)
			sq += float64(v) * float64(v)
		}
		mean := sum / float64(len(extra))
		std := math.Sqrt(sq/float64(len(extra)) - mean*mean)
		if math.Abs(mean) > 1e-3 || math.Abs(std-initmodel.InitStd) > 1e-3 {
			t.Errorf("filler rows have mean %.4g and std %.4g, want 0 and %g", mean, std, initmodel.InitStd)
		}
	}
	if len(f.Tensors) != len(plain.Tensors)+3 {
		t.Errorf("%d tensors, want the model maker's %d and 3 biases", len(f.Tensors), len(plain.Tensors))
	}
	for name, rows := range map[string]int64{"blk.0.attn_q.bias": 64, "blk.0.attn_k.bias": 32, "blk.0.attn_v.bias": 32} {
		if info, ok := f.Tensor(name); !ok || info.Type != gguf.TensorF32 || len(info.Shape) != 1 || info.Shape[0] != rows {
			t.Errorf("bias %s: %+v (present %v), want F32 of %d", name, info, ok, rows)
		}
	}
}

func TestBadArgumentsAreErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.gguf")
	for _, c := range []struct {
		name, out, typ string
		vocab          int
		want           string
	}{
		{"no output", "", "bf16", 1000, "--out is required"},
		{"unknown type", out, "f8", 1000, "unknown weight type"},
		{"vocabulary too small", out, "bf16", 10, "below the minimum"},
		{"bad shape", out, "bf16", 1000, "must split into"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := smallShape()
			if c.name == "bad shape" {
				cfg.HeadCount = 5
			}
			_, err := run(c.out, c.typ, 1, c.vocab, cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
