// Command shapedmodel writes a llama-architecture GGUF model with random
// weights in the shape of a real model (by default Qwen2.5-0.5B: 24 layers,
// embedding 896, 14 heads with 2 KV heads, feed-forward 4864, vocabulary
// 151,936, tied output, biases on the query, key and value projections),
// so that benchmarks measure the cost of that model without downloading it.
//
// The weights and the byte-level BPE tokenizer come from the built-in model
// maker (llm/initmodel). Its tokenizer, learned from a small corpus, has a
// few thousand tokens; to reach the target vocabulary the file gets unused
// filler tokens ("<|extra_N|>", token type UNUSED, never produced by
// tokenisation) and the matching random embedding rows, so the embedding
// and output layer cost what the real model's do.
//
// scripts/gpu-bench.sh runs it on the GPU machine, which has no Go
// toolchain: `make gpu-bundle` builds it as a static binary.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentrl/agentrl/llm/gguf"
	"github.com/agentrl/agentrl/llm/initmodel"
)

// tokenTypeUnused is llama.cpp's LLAMA_TOKEN_TYPE_UNUSED: the loader keeps
// such tokens out of its special-token scan, so thousands of fillers do not
// slow tokenisation.
const tokenTypeUnused = 5

// Summary is what the command prints as JSON.
type Summary struct {
	Path              string  `json:"path"`
	Type              string  `json:"type"`
	Parameters        int64   `json:"parameters"`
	VocabSize         int     `json:"vocab_size"`
	LearnedTokens     int     `json:"learned_tokens"`
	Layers            int     `json:"layers"`
	EmbeddingLength   int     `json:"embedding_length"`
	FeedForwardLength int     `json:"feed_forward_length"`
	HeadCount         int     `json:"head_count"`
	HeadCountKV       int     `json:"head_count_kv"`
	ContextLength     int     `json:"context_length"`
	RopeFreqBase      float32 `json:"rope_freq_base"`
	RMSNormEpsilon    float32 `json:"rms_norm_epsilon"`
	FileSize          int64   `json:"file_size"`
}

func main() {
	out := flag.String("out", "", "write the model to `FILE` (required)")
	typ := flag.String("type", "bf16", "type of the weight matrices: f32, f16, bf16 or q8_0")
	seed := flag.Uint64("seed", 1, "seed of the random weights")
	vocab := flag.Int("vocab", 151936, "vocabulary size, padded with unused tokens beyond the learned ones")
	cfg := initmodel.Config{Preset: "small"}
	flag.IntVar(&cfg.EmbeddingLength, "embd", 896, "embedding length")
	flag.IntVar(&cfg.BlockCount, "layers", 24, "transformer blocks")
	flag.IntVar(&cfg.FeedForwardLength, "ff", 4864, "feed-forward length")
	flag.IntVar(&cfg.HeadCount, "heads", 14, "attention heads")
	flag.IntVar(&cfg.HeadCountKV, "kv-heads", 2, "key/value heads")
	flag.IntVar(&cfg.ContextLength, "ctx", 4096, "training context length stored in the file")
	ropeBase := flag.Float64("rope-base", 1e6, "rotary embedding frequency base")
	eps := flag.Float64("eps", 1e-6, "RMS norm epsilon")
	flag.StringVar(&cfg.Name, "name", "agentrl-qwen2.5-0.5b-shape", "model name stored in the file")
	flag.Parse()
	cfg.RopeFreqBase, cfg.RMSNormEpsilon = float32(*ropeBase), float32(*eps)

	summary, err := run(*out, *typ, *seed, *vocab, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "shapedmodel: %v\n", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(summary); err != nil {
		fmt.Fprintf(os.Stderr, "shapedmodel: %v\n", err)
		os.Exit(1)
	}
}

func run(out, typeName string, seed uint64, vocab int, cfg initmodel.Config) (Summary, error) {
	if out == "" {
		return Summary{}, errors.New("--out is required")
	}
	var err error
	if cfg.Type, err = initmodel.ParseType(typeName); err != nil {
		return Summary{}, err
	}
	cfg.Seed = seed
	// The corpus yields far fewer tokens than a real vocabulary; asking for
	// more only slows the tokenizer learner down.
	cfg.VocabSize = min(vocab, 8192)
	if vocab < initmodel.MinVocabSize {
		return Summary{}, fmt.Errorf("--vocab %d is below the minimum of %d", vocab, initmodel.MinVocabSize)
	}
	resolved, err := cfg.Resolve()
	if err != nil {
		return Summary{}, err
	}

	learned, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".learned-*")
	if err != nil {
		return Summary{}, err
	}
	learned.Close()
	defer os.Remove(learned.Name())
	base, err := initmodel.Write(learned.Name(), cfg)
	if err != nil {
		return Summary{}, err
	}
	size, biases, err := padVocabulary(learned.Name(), out, vocab, seed)
	if err != nil {
		return Summary{}, err
	}
	return Summary{
		Path: out, Type: base.Type,
		Parameters:    resolved.Parameters(vocab) + biases,
		VocabSize:     vocab,
		LearnedTokens: base.VocabSize,
		Layers:        base.Layers, EmbeddingLength: base.EmbeddingLength, FeedForwardLength: base.FeedForwardLength,
		HeadCount: base.HeadCount, HeadCountKV: base.HeadCountKV, ContextLength: base.ContextLength,
		RopeFreqBase: resolved.RopeFreqBase, RMSNormEpsilon: resolved.RMSNormEpsilon,
		FileSize: size,
	}, nil
}

// padVocabulary copies the model at src to dst with the vocabulary grown to
// vocab tokens: filler tokens in the tokenizer and random rows appended to
// the token embedding (and the output projection, if the model has one).
// It adds Qwen2's biases of the query, key and value projections (F32,
// random), which also size llama.cpp's compute graphs as the real model's
// tensor count does; it returns the file size and the biases' parameters.
func padVocabulary(src, dst string, vocab int, seed uint64) (size, biases int64, err error) {
	f, err := gguf.Open(src)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	tokens, err := f.GetStrings("tokenizer.ggml.tokens")
	if err != nil {
		return 0, 0, err
	}
	extra := vocab - len(tokens)

	w := gguf.NewWriter()
	for _, kv := range f.Metadata {
		value := kv.Value
		switch kv.Key {
		case "tokenizer.ggml.tokens":
			padded := append([]string(nil), tokens...)
			for i := range extra {
				padded = append(padded, fmt.Sprintf("<|extra_%d|>", i))
			}
			value = padded
		case "tokenizer.ggml.token_type":
			types, ok := kv.Value.([]int32)
			if !ok {
				return 0, 0, fmt.Errorf("%s: tokenizer.ggml.token_type is %T, want []int32", src, kv.Value)
			}
			padded := append([]int32(nil), types...)
			for range extra {
				padded = append(padded, tokenTypeUnused)
			}
			value = padded
		case "llama.vocab_size":
			value = uint32(vocab)
		}
		w.Set(kv.Key, value)
	}
	for _, t := range f.Tensors {
		name := t.Name
		if name == "token_embd.weight" || name == "output.weight" {
			shape := []int64{t.Shape[0], int64(vocab)}
			w.AddTensorFunc(name, t.Type, shape, func(out io.Writer) error {
				data, err := f.TensorData(name)
				if err != nil {
					return err
				}
				if _, err := out.Write(data); err != nil {
					return err
				}
				return writeNormalRows(out, t.Type, t.Shape[0], int64(extra), seed, name)
			})
			continue
		}
		w.AddTensorFunc(name, t.Type, t.Shape, func(out io.Writer) error {
			data, err := f.TensorData(name)
			if err != nil {
				return err
			}
			_, err = out.Write(data)
			return err
		})
		if prefix, ok := strings.CutSuffix(name, ".weight"); ok && attentionInput(prefix) {
			bias, rows := prefix+".bias", t.Shape[1]
			w.AddTensorFunc(bias, gguf.TensorF32, []int64{rows}, func(out io.Writer) error {
				return writeNormalRows(out, gguf.TensorF32, rows, 1, seed, bias)
			})
			biases += rows
		}
	}
	size, err = w.WriteFile(dst)
	return size, biases, err
}

// attentionInput reports whether the tensor prefix ("blk.0.attn_q") names a
// query, key or value projection.
func attentionInput(prefix string) bool {
	for _, p := range []string{".attn_q", ".attn_k", ".attn_v"} {
		if strings.HasSuffix(prefix, p) {
			return true
		}
	}
	return false
}

// writeNormalRows writes rows of rowLen normal(0, initmodel.InitStd) values
// in typ, from a generator seeded by the model seed and the tensor name.
func writeNormalRows(out io.Writer, typ gguf.TensorType, rowLen, rows int64, seed uint64, name string) error {
	h := fnv.New64a()
	h.Write([]byte("extra rows of " + name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	row := make([]float32, rowLen)
	for range rows {
		for i := range row {
			row[i] = float32(rng.NormFloat64() * initmodel.InitStd)
		}
		b, err := gguf.EncodeFloat32(typ, row)
		if err != nil {
			return fmt.Errorf("tensor %s: %w", name, err)
		}
		if _, err := out.Write(b); err != nil {
			return err
		}
	}
	return nil
}
