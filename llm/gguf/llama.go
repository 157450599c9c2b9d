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
//     adapter.lora.alpha an f32 (the adapter loader reads them unchecked);
//   - the tokens must be distinct (an empty one counts as "[EMPTY_i]", as
//     llama.cpp names it);
//   - ARCH.expert_count at most 512, ARCH.expert_used_count at most that
//     and positive exactly when there are experts, and the expert groups
//     (ARCH.expert_group_count, ARCH.expert_group_used_count) as llama.cpp
//     asserts them;
//   - ARCH.rope.scaling.type one of none, linear, yarn, longrope.
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
	seen := make(map[string]int, len(tokens))
	for i, tok := range tokens {
		if tok == "" {
			tok = fmt.Sprintf("[EMPTY_%d]", i)
		}
		if j, dup := seen[tok]; dup {
			return fmt.Errorf("%w: tokenizer.ggml.tokens holds %q twice (tokens %d and %d)", ErrInvalid, tok, j, i)
		}
		seen[tok] = i
	}
	arch := f.Architecture()
	if err := f.checkExperts(arch); err != nil {
		return err
	}
	if scaling, ok := f.Lookup(arch + ".rope.scaling.type"); ok {
		if s, isString := scaling.(string); isString && s != "none" && s != "linear" && s != "yarn" && s != "longrope" {
			return fmt.Errorf("%w: %s.rope.scaling.type %q, want none, linear, yarn or longrope", ErrInvalid, arch, s)
		}
	}
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

// maxExperts is llama.cpp's LLAMA_MAX_EXPERTS.
const maxExperts = 512

// checkExperts checks the mixture-of-experts counts as llama.cpp's
// hyperparameter loader asserts them. Absent keys are 0, as there; a key
// of a type that is not an integer is left to llama.cpp, which reports it.
func (f *File) checkExperts(arch string) error {
	count := func(key string) uint64 {
		switch v, _ := f.Lookup(arch + key); n := v.(type) {
		case uint8:
			return uint64(n)
		case uint16:
			return uint64(n)
		case uint32:
			return uint64(n)
		case uint64:
			return n
		case int8:
			return uint64(max(n, 0))
		case int16:
			return uint64(max(n, 0))
		case int32:
			return uint64(max(n, 0))
		case int64:
			return uint64(max(n, 0))
		}
		return 0
	}
	experts, used := count(".expert_count"), count(".expert_used_count")
	groups, groupsUsed := count(".expert_group_count"), count(".expert_group_used_count")
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	switch {
	case experts > maxExperts:
		return bad("%s.expert_count %d is over %d", arch, experts, maxExperts)
	case used > experts:
		return bad("%s.expert_used_count %d is over %s.expert_count %d", arch, used, arch, experts)
	case experts > 0 && used == 0:
		return bad("%s.expert_used_count is 0 for %d experts", arch, experts)
	case experts == 0 && groups > 0:
		return bad("%s.expert_group_count %d without experts", arch, groups)
	case experts > 0 && groups >= experts:
		return bad("%s.expert_group_count %d must be below %s.expert_count %d", arch, groups, arch, experts)
	case groups > 1 && (experts%groups != 0 || groupsUsed == 0 || groupsUsed >= groups):
		return bad("%s.expert_group_count %d must divide %s.expert_count %d, and %s.expert_group_used_count %d be in [1, %d)",
			arch, groups, arch, experts, arch, groupsUsed, groups)
	}
	return nil
}
