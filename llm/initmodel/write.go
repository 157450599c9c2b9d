package initmodel

import (
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"

	"github.com/agentrl/agentrl/llm/bpe"
	"github.com/agentrl/agentrl/llm/gguf"
)

// InitStd is the standard deviation of the initial weight matrices (GPT-2's
// scheme). The projections that write into the residual stream
// (attn_output, ffn_down) are scaled down by 1/sqrt(2*layers) so the
// residual does not grow with depth.
const InitStd = 0.02

// ChatTemplate is the ChatML chat template stored in the model; llama.cpp
// recognises it as its built-in "chatml" format.
const ChatTemplate = "{%- for message in messages -%}" +
	"{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' -}}" +
	"{%- endfor -%}" +
	"{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"

// Summary describes a written model.
type Summary struct {
	Path              string `json:"path"`
	Name              string `json:"name"`
	Preset            string `json:"preset"`
	Type              string `json:"type"`
	Parameters        int64  `json:"parameters"`
	VocabSize         int    `json:"vocab_size"`
	Merges            int    `json:"merges"`
	Layers            int    `json:"layers"`
	EmbeddingLength   int    `json:"embedding_length"`
	FeedForwardLength int    `json:"feed_forward_length"`
	HeadCount         int    `json:"head_count"`
	HeadCountKV       int    `json:"head_count_kv"`
	ContextLength     int    `json:"context_length"`
	TiedOutput        bool   `json:"tied_output"`
	FileSize          int64  `json:"file_size"`
}

// Write learns a tokenizer from the configured corpus and writes a
// llama-architecture GGUF model with freshly initialised weights to path.
// The file appears atomically, complete or not at all.
func Write(path string, cfg Config) (Summary, error) {
	cfg, err := cfg.Resolve()
	if err != nil {
		return Summary{}, err
	}
	corpus := cfg.Corpus
	if len(corpus) == 0 {
		corpus = []string{Corpus()}
	}
	tok, err := bpe.Learn(corpus, bpe.LearnOptions{VocabSize: cfg.VocabSize, Specials: Specials})
	if err != nil {
		return Summary{}, fmt.Errorf("learn tokenizer: %w", err)
	}
	w, err := build(cfg, tok)
	if err != nil {
		return Summary{}, err
	}
	size, err := w.WriteFile(path)
	if err != nil {
		return Summary{}, fmt.Errorf("write %s: %w", path, err)
	}
	return Summary{
		Path:              path,
		Name:              cfg.Name,
		Preset:            cfg.Preset,
		Type:              cfg.Type.String(),
		Parameters:        cfg.Parameters(tok.Len()),
		VocabSize:         tok.Len(),
		Merges:            len(tok.Merges()),
		Layers:            cfg.BlockCount,
		EmbeddingLength:   cfg.EmbeddingLength,
		FeedForwardLength: cfg.FeedForwardLength,
		HeadCount:         cfg.HeadCount,
		HeadCountKV:       cfg.HeadCountKV,
		ContextLength:     cfg.ContextLength,
		TiedOutput:        !cfg.SeparateOutput,
		FileSize:          size,
	}, nil
}

// build lays out the metadata and tensors the llama loader expects.
func build(cfg Config, tok *bpe.Tokenizer) (*gguf.Writer, error) {
	w := gguf.NewWriter()
	u32 := func(v int) uint32 { return uint32(v) }
	w.Set("general.architecture", "llama")
	w.Set("general.name", cfg.Name)
	w.Set("general.file_type", fileTypes[cfg.Type])
	w.Set("general.quantization_version", uint32(2))
	w.Set("llama.vocab_size", u32(tok.Len()))
	w.Set("llama.context_length", u32(cfg.ContextLength))
	w.Set("llama.embedding_length", u32(cfg.EmbeddingLength))
	w.Set("llama.block_count", u32(cfg.BlockCount))
	w.Set("llama.feed_forward_length", u32(cfg.FeedForwardLength))
	w.Set("llama.attention.head_count", u32(cfg.HeadCount))
	w.Set("llama.attention.head_count_kv", u32(cfg.HeadCountKV))
	w.Set("llama.attention.layer_norm_rms_epsilon", cfg.RMSNormEpsilon)
	w.Set("llama.rope.freq_base", cfg.RopeFreqBase)
	w.Set("llama.rope.dimension_count", u32(cfg.headDim()))

	tok.WriteGGUF(w)
	ids := map[string]string{
		TokenBOS:   "tokenizer.ggml.bos_token_id",
		TokenEOS:   "tokenizer.ggml.eos_token_id",
		TokenPad:   "tokenizer.ggml.padding_token_id",
		TokenIMEnd: "tokenizer.ggml.eot_token_id",
	}
	for _, special := range Specials {
		key, ok := ids[special]
		if !ok {
			continue
		}
		id, found := tok.Lookup(special)
		if !found {
			return nil, fmt.Errorf("tokenizer lacks special token %s", special)
		}
		w.Set(key, uint32(id))
	}
	w.Set("tokenizer.ggml.add_bos_token", true)
	w.Set("tokenizer.ggml.add_eos_token", false)
	w.Set("tokenizer.chat_template", ChatTemplate)

	embd, vocab := int64(cfg.EmbeddingLength), int64(tok.Len())
	q, kv, ff := int64(cfg.HeadCount*cfg.headDim()), int64(cfg.HeadCountKV*cfg.headDim()), int64(cfg.FeedForwardLength)
	residualStd := InitStd / math.Sqrt(2*float64(cfg.BlockCount))
	matrix := func(name string, std float64, shape ...int64) {
		typ := cfg.matrixType(shape[0])
		w.AddTensorFunc(name, typ, shape, normalWriter(cfg.Seed, name, typ, shape, std))
	}
	ones := func(name string) {
		w.AddTensorFunc(name, gguf.TensorF32, []int64{embd}, onesWriter(embd))
	}

	matrix("token_embd.weight", InitStd, embd, vocab)
	for i := range cfg.BlockCount {
		blk := func(s string) string { return fmt.Sprintf("blk.%d.%s.weight", i, s) }
		ones(blk("attn_norm"))
		matrix(blk("attn_q"), InitStd, embd, q)
		matrix(blk("attn_k"), InitStd, embd, kv)
		matrix(blk("attn_v"), InitStd, embd, kv)
		matrix(blk("attn_output"), residualStd, q, embd)
		ones(blk("ffn_norm"))
		matrix(blk("ffn_gate"), InitStd, embd, ff)
		matrix(blk("ffn_up"), InitStd, embd, ff)
		matrix(blk("ffn_down"), residualStd, ff, embd)
	}
	ones("output_norm.weight")
	if cfg.SeparateOutput {
		matrix("output.weight", InitStd, embd, vocab)
	}
	return w, w.Err()
}

// normalWriter returns a writer of a tensor of normal(0, std) values. Each
// tensor draws from its own generator, seeded by the model seed and the
// tensor name, so a tensor's values do not depend on the others.
func normalWriter(seed uint64, name string, typ gguf.TensorType, shape []int64, std float64) func(io.Writer) error {
	return func(out io.Writer) error {
		h := fnv.New64a()
		h.Write([]byte(name))
		rng := rand.New(rand.NewPCG(seed, h.Sum64()))
		rowLen, rows := shape[0], shape[1]
		// Convert a few rows at a time; rows are whole quantisation blocks.
		chunkRows := max(1, (1<<16)/rowLen)
		buf := make([]float32, chunkRows*rowLen)
		for done := int64(0); done < rows; done += chunkRows {
			n := min(chunkRows, rows-done) * rowLen
			for i := range buf[:n] {
				buf[i] = float32(rng.NormFloat64() * std)
			}
			raw, err := gguf.EncodeFloat32(typ, buf[:n])
			if err != nil {
				return err
			}
			if _, err := out.Write(raw); err != nil {
				return err
			}
		}
		return nil
	}
}

func onesWriter(n int64) func(io.Writer) error {
	return func(out io.Writer) error {
		values := make([]float32, n)
		for i := range values {
			values[i] = 1
		}
		raw, err := gguf.EncodeFloat32(gguf.TensorF32, values)
		if err != nil {
			return err
		}
		_, err = out.Write(raw)
		return err
	}
}
