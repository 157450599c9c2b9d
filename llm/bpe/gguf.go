package bpe

import (
	"fmt"

	"github.com/agentrl/agentrl/llm/gguf"
)

// Model is the tokenizer.ggml.model value of byte-level BPE vocabularies.
const Model = "gpt2"

// GGUF metadata keys of the vocabulary.
const (
	KeyModel     = "tokenizer.ggml.model"
	KeyPre       = "tokenizer.ggml.pre"
	KeyTokens    = "tokenizer.ggml.tokens"
	KeyTokenType = "tokenizer.ggml.token_type"
	KeyMerges    = "tokenizer.ggml.merges"
)

// WriteGGUF stores the vocabulary in w: model, pre-tokenizer, tokens, token
// types and merges. Special token ids and flags are the caller's.
func (t *Tokenizer) WriteGGUF(w *gguf.Writer) {
	types := make([]int32, len(t.types))
	for i, typ := range t.types {
		types[i] = int32(typ)
	}
	w.Set(KeyModel, Model)
	w.Set(KeyPre, PreTokenizer)
	w.Set(KeyTokens, t.tokens)
	w.Set(KeyTokenType, types)
	w.Set(KeyMerges, t.merges)
}

// FromGGUF loads the vocabulary of a model file. It supports byte-level BPE
// vocabularies with the PreTokenizer pre-tokenizer, the kind Learn makes.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	model, err := f.GetString(KeyModel)
	if err != nil {
		return nil, err
	}
	pre, err := f.GetString(KeyPre)
	if err != nil {
		return nil, err
	}
	if model != Model || pre != PreTokenizer {
		return nil, fmt.Errorf("tokenizer %q with pre-tokenizer %q is not supported (want %q with %q)", model, pre, Model, PreTokenizer)
	}
	tokens, err := f.GetStrings(KeyTokens)
	if err != nil {
		return nil, err
	}
	rawTypes, err := f.GetInt32s(KeyTokenType)
	if err != nil {
		return nil, err
	}
	merges, err := f.GetStrings(KeyMerges)
	if err != nil {
		return nil, err
	}
	types := make([]TokenType, len(rawTypes))
	for i, typ := range rawTypes {
		types[i] = TokenType(typ)
	}
	t, err := New(tokens, types, merges)
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	return t, nil
}
