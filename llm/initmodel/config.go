package initmodel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentrl/agentrl/llm/bpe"
	"github.com/agentrl/agentrl/llm/gguf"
)

// Special tokens of every model this package makes, in vocabulary order
// after the learned tokens. The ChatML markers delimit chat turns;
// "<|im_end|>" ends a turn and so ends generation.
const (
	TokenBOS     = "<s>"
	TokenEOS     = "</s>"
	TokenPad     = "<pad>"
	TokenIMStart = "<|im_start|>"
	TokenIMEnd   = "<|im_end|>"
)

// Specials lists the special tokens in vocabulary order.
var Specials = []string{TokenBOS, TokenEOS, TokenPad, TokenIMStart, TokenIMEnd}

// Vocabulary size bounds: at least the byte tokens and the specials; at most
// what a small model can afford in its embedding.
const (
	MinVocabSize = bpe.MinVocabSize + 5
	MaxVocabSize = 1 << 17
)

// Config describes the model to make. Zero fields take the preset's value.
type Config struct {
	// Preset is "tiny" (the default) or "small".
	Preset string
	// Name is general.name; by default "agentrl-<preset>".
	Name string
	// Seed makes the weights reproducible: the same Config gives the same
	// file.
	Seed uint64
	// Type is the element type of the weight matrices: F32 (the zero
	// value), F16, BF16, Q8_0 or Q4_K. Norm weights are always F32. With
	// Q4_K, matrices whose rows are not a multiple of 256 values are
	// stored as Q8_0 (llama.cpp's quantiser uses Q5_0 there, a type the
	// trainer does not read).
	Type gguf.TensorType
	// SeparateOutput adds an output projection (output.weight); by default
	// the output is tied to the token embedding, which llama.cpp then uses
	// for both.
	SeparateOutput bool

	// VocabSize is the target vocabulary size, specials included; a small
	// corpus may yield fewer tokens.
	VocabSize         int
	ContextLength     int
	EmbeddingLength   int
	BlockCount        int
	FeedForwardLength int
	HeadCount         int
	// HeadCountKV below HeadCount gives grouped-query attention.
	HeadCountKV    int
	RopeFreqBase   float32
	RMSNormEpsilon float32

	// Corpus is the text the tokenizer is learned from; when empty, the
	// built-in corpus (Corpus) is used.
	Corpus []string
}

// Presets are the model shapes Config.Preset names.
var Presets = map[string]Config{
	// About 3.7 M parameters: quick to train, for tests and demos.
	"tiny": {
		VocabSize:         3072,
		ContextLength:     1024,
		EmbeddingLength:   256,
		BlockCount:        4,
		FeedForwardLength: 704,
		HeadCount:         4,
		HeadCountKV:       2,
		RopeFreqBase:      10000,
		RMSNormEpsilon:    1e-5,
	},
	// About 28 M parameters (with a full vocabulary).
	"small": {
		VocabSize:         8192,
		ContextLength:     2048,
		EmbeddingLength:   512,
		BlockCount:        8,
		FeedForwardLength: 1408,
		HeadCount:         8,
		HeadCountKV:       4,
		RopeFreqBase:      10000,
		RMSNormEpsilon:    1e-5,
	},
}

// PresetNames lists the presets in a stable order.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for name := range Presets {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// weightTypes are the matrix types Write can produce, by their CLI names.
var weightTypes = map[string]gguf.TensorType{
	"f32":  gguf.TensorF32,
	"f16":  gguf.TensorF16,
	"bf16": gguf.TensorBF16,
	"q8_0": gguf.TensorQ8_0,
	"q4_k": gguf.TensorQ4_K,
}

// fileTypes maps a weight type to general.file_type (llama_ftype).
var fileTypes = map[gguf.TensorType]uint32{
	gguf.TensorF32:  0,
	gguf.TensorF16:  1,
	gguf.TensorQ8_0: 7,
	gguf.TensorBF16: 32,
	gguf.TensorQ4_K: 14, // LLAMA_FTYPE_MOSTLY_Q4_K_S
}

// matrixType is the type of a weight matrix whose rows hold rowLen values:
// Type, or Q8_0 for Q4_K rows that are not whole Q4_K blocks.
func (c Config) matrixType(rowLen int64) gguf.TensorType {
	if c.Type == gguf.TensorQ4_K && rowLen%gguf.TensorQ4_K.BlockSize() != 0 {
		return gguf.TensorQ8_0
	}
	return c.Type
}

// ParseType parses a weight type name: f32, f16, bf16, q8_0 or q4_k.
func ParseType(name string) (gguf.TensorType, error) {
	typ, ok := weightTypes[strings.ToLower(name)]
	if !ok {
		return 0, fmt.Errorf("unknown weight type %q (want f32, f16, bf16, q8_0 or q4_k)", name)
	}
	return typ, nil
}

// Resolve returns the configuration with zero fields filled from the preset,
// or an error if the result is not a model Write can make.
func (c Config) Resolve() (Config, error) {
	if c.Preset == "" {
		c.Preset = "tiny"
	}
	p, ok := Presets[c.Preset]
	if !ok {
		return c, fmt.Errorf("unknown preset %q (want %s)", c.Preset, strings.Join(PresetNames(), " or "))
	}
	if c.Name == "" {
		c.Name = "agentrl-" + c.Preset
	}
	fill := func(v *int, preset int) {
		if *v == 0 {
			*v = preset
		}
	}
	fill(&c.VocabSize, p.VocabSize)
	fill(&c.ContextLength, p.ContextLength)
	fill(&c.EmbeddingLength, p.EmbeddingLength)
	fill(&c.BlockCount, p.BlockCount)
	fill(&c.FeedForwardLength, p.FeedForwardLength)
	fill(&c.HeadCount, p.HeadCount)
	fill(&c.HeadCountKV, p.HeadCountKV)
	if c.RopeFreqBase == 0 {
		c.RopeFreqBase = p.RopeFreqBase
	}
	if c.RMSNormEpsilon == 0 {
		c.RMSNormEpsilon = p.RMSNormEpsilon
	}
	return c, c.check()
}

func (c Config) check() error {
	if _, ok := fileTypes[c.Type]; !ok {
		return fmt.Errorf("weight type %s is not supported (want f32, f16, bf16, q8_0 or q4_k)", c.Type)
	}
	if c.VocabSize < MinVocabSize || c.VocabSize > MaxVocabSize {
		return fmt.Errorf("vocabulary size %d out of range [%d, %d]", c.VocabSize, MinVocabSize, MaxVocabSize)
	}
	for _, f := range []struct {
		name      string
		v, lo, hi int
	}{
		{"context length", c.ContextLength, 16, 1 << 20},
		{"embedding length", c.EmbeddingLength, 8, 1 << 14},
		{"block count", c.BlockCount, 1, 256},
		{"feed-forward length", c.FeedForwardLength, 8, 1 << 16},
		{"head count", c.HeadCount, 1, 256},
		{"KV head count", c.HeadCountKV, 1, 256},
	} {
		if f.v < f.lo || f.v > f.hi {
			return fmt.Errorf("%s %d out of range [%d, %d]", f.name, f.v, f.lo, f.hi)
		}
	}
	if c.EmbeddingLength%c.HeadCount != 0 || (c.EmbeddingLength/c.HeadCount)%2 != 0 {
		return fmt.Errorf("embedding length %d must split into %d heads of even size (rotary embeddings rotate pairs)", c.EmbeddingLength, c.HeadCount)
	}
	if c.HeadCount%c.HeadCountKV != 0 {
		return fmt.Errorf("head count %d is not a multiple of the KV head count %d", c.HeadCount, c.HeadCountKV)
	}
	// The smallest block a matrix row may be stored in: Q4_K rows that are
	// not whole 256-blocks fall back to Q8_0's 32.
	if smallest := c.matrixType(1); c.EmbeddingLength%int(smallest.BlockSize()) != 0 || c.FeedForwardLength%int(smallest.BlockSize()) != 0 {
		return fmt.Errorf("%s stores rows in blocks of %d (%s): embedding length %d and feed-forward length %d must be multiples",
			c.Type, smallest.BlockSize(), smallest, c.EmbeddingLength, c.FeedForwardLength)
	}
	if !(c.RopeFreqBase > 0) || !(c.RMSNormEpsilon > 0) {
		return fmt.Errorf("rope frequency base %g and RMS norm epsilon %g must be positive", c.RopeFreqBase, c.RMSNormEpsilon)
	}
	return nil
}

// headDim is the size of one attention head.
func (c Config) headDim() int { return c.EmbeddingLength / c.HeadCount }

// Parameters counts the weights of a model with this shape and vocabulary.
func (c Config) Parameters(vocab int) int64 {
	embd, ff, kv := int64(c.EmbeddingLength), int64(c.FeedForwardLength), int64(c.HeadCountKV*c.headDim())
	perLayer := 2*embd + // attention and feed-forward norms
		2*embd*embd + 2*embd*kv + // q, o; k, v
		3*embd*ff // gate, up, down
	n := int64(vocab)*embd + int64(c.BlockCount)*perLayer + embd
	if c.SeparateOutput {
		n += int64(vocab) * embd
	}
	return n
}
