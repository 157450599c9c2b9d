package gguf

import "fmt"

// CheckLlamaMetadata reports metadata that llama.cpp's model and LoRA
// adapter loaders do not turn into an error but abort the process on, or
// read out of bounds with. Read already rejects what ggml itself cannot
// parse; this covers the well-formed files whose values have the wrong
// type or length:
//
//   - tokenizer.ggml.tokens and tokenizer.ggml.merges must be string arrays;
//   - tokenizer.ggml.scores (f32) and tokenizer.ggml.token_type (i32) must
//     have an entry for every token;
//   - the per-layer hyperparameters ARCH.feed_forward_length,
//     ARCH.attention.head_count and ARCH.attention.head_count_kv, when given
//     as arrays, must hold integers;
//   - general.type, general.architecture and adapter.type must be strings and
//     adapter.lora.alpha an f32 (the adapter loader reads them unchecked).
//
// Keys of the wrong scalar type elsewhere make llama.cpp fail with an error
// and are left to it.
func (f *File) CheckLlamaMetadata() error {
	tokens, err := optional[[]string](f, "tokenizer.ggml.tokens")
	if err != nil {
		return err
	}
	if _, err := optional[[]string](f, "tokenizer.ggml.merges"); err != nil {
		return err
	}
	if scores, err := optional[[]float32](f, "tokenizer.ggml.scores"); err != nil {
		return err
	} else if scores != nil && len(scores) < len(tokens) {
		return fmt.Errorf("%w: tokenizer.ggml.scores has %d entries for %d tokens", ErrInvalid, len(scores), len(tokens))
	}
	if types, err := optional[[]int32](f, "tokenizer.ggml.token_type"); err != nil {
		return err
	} else if types != nil && len(types) < len(tokens) {
		return fmt.Errorf("%w: tokenizer.ggml.token_type has %d entries for %d tokens", ErrInvalid, len(types), len(tokens))
	}
	for _, key := range []string{"general.type", "general.architecture", "adapter.type"} {
		if _, err := optional[string](f, key); err != nil {
			return err
		}
	}
	if _, err := optional[float32](f, "adapter.lora.alpha"); err != nil {
		return err
	}
	arch := f.Architecture()
	for _, key := range []string{".feed_forward_length", ".attention.head_count", ".attention.head_count_kv"} {
		v, ok := f.Lookup(arch + key)
		if !ok {
			continue
		}
		typ, elem, _ := TypeOf(v)
		if typ == TypeArray && elem != TypeUint32 && elem != TypeInt32 {
			return fmt.Errorf("%w: %s%s is an array of %s, want integers", ErrInvalid, arch, key, elem)
		}
	}
	return nil
}

// optional returns the value of key as a T, the zero T when the key is
// absent, and an error when it has another type.
func optional[T any](f *File, key string) (T, error) {
	var zero T
	v, ok := f.Lookup(key)
	if !ok {
		return zero, nil
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%w: %s has type %s, want %s", ErrInvalid, key, typeName(v), typeName(zero))
	}
	return t, nil
}
