package gguf

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckLlamaMetadata(t *testing.T) {
	valid := []KV{
		{"general.architecture", "llama"},
		{"llama.attention.head_count", []uint32{4, 4}},
		{"tokenizer.ggml.tokens", []string{"a", "b", "c"}},
		{"tokenizer.ggml.token_type", []int32{1, 1, 3}},
		{"tokenizer.ggml.scores", []float32{0, 0, 0}},
		{"tokenizer.ggml.merges", []string{"a b"}},
	}
	cases := []struct {
		name string
		kv   KV
		msg  string
	}{
		{"valid", KV{"general.name", "x"}, ""},
		{"tokens type", KV{"tokenizer.ggml.tokens", []uint32{1, 2, 3}}, "tokenizer.ggml.tokens has type arr[u32], want arr[str]"},
		{"merges type", KV{"tokenizer.ggml.merges", "a b"}, "tokenizer.ggml.merges has type str, want arr[str]"},
		{"short token types", KV{"tokenizer.ggml.token_type", []int32{1}}, "token_type has 1 entries for 3 tokens"},
		{"token type type", KV{"tokenizer.ggml.token_type", []uint8{1, 1, 1}}, "want arr[i32]"},
		{"short scores", KV{"tokenizer.ggml.scores", []float32{}}, "scores has 0 entries for 3 tokens"},
		{"float heads", KV{"llama.attention.head_count", []float32{4, 4}}, "array of f32, want integers"},
		{"adapter alpha", KV{"adapter.lora.alpha", float64(16)}, "adapter.lora.alpha has type f64, want f32"},
		{"architecture type", KV{"general.architecture", []string{"llama"}}, "general.architecture has type arr[str], want str"},
		{"duplicate tokens", KV{"tokenizer.ggml.tokens", []string{"a", "b", "a"}}, `tokenizer.ggml.tokens holds "a" twice (tokens 0 and 2)`},
		{"empty token named as a token", KV{"tokenizer.ggml.tokens", []string{"[EMPTY_2]", "b", ""}}, `holds "[EMPTY_2]" twice`},
		{"experts used without experts", KV{"llama.expert_used_count", uint32(2)}, "llama.expert_used_count 2 is over llama.expert_count 0"},
		{"too many experts", KV{"llama.expert_count", uint32(600)}, "llama.expert_count 600 is over 512"},
		{"rope scaling", KV{"llama.rope.scaling.type", "bogus"}, `llama.rope.scaling.type "bogus", want none, linear, yarn or longrope`},
		{"rope scaling known", KV{"llama.rope.scaling.type", "yarn"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := NewWriter()
			for _, kv := range valid {
				w.Set(kv.Key, kv.Value)
			}
			w.Set(c.kv.Key, c.kv.Value)
			err := writeAndRead(t, w).CheckLlamaMetadata()
			if c.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want %q", err, c.msg)
			}
		})
	}
}
