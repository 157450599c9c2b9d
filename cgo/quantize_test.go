package cgo

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/agentrl/agentrl/llm/gguf"
)

// TestDequantize checks ggml's conversions as Dequantize exposes them: a
// hand-made Q4_1 block, and Q8_0 and Q4_K data against agentrl's own
// decoders of those formats.
func TestDequantize(t *testing.T) {
	// Q4_1: scale d, minimum m, 32 4-bit values q; x = d q + m, with value
	// j in the low nibble of byte j and value j+16 in its high nibble.
	block := make([]byte, 20)
	binary.LittleEndian.PutUint16(block[0:], gguf.Float32ToF16(0.5))
	binary.LittleEndian.PutUint16(block[2:], gguf.Float32ToF16(-2))
	for j := range 16 {
		block[4+j] = byte(j) | byte(15-j)<<4
	}
	got, err := Dequantize(Type(gguf.TensorQ4_1), block)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 16 {
		if want := 0.5*float32(j) - 2; got[j] != want {
			t.Errorf("q4_1 value %d = %g, want %g", j, got[j], want)
		}
		if want := 0.5*float32(15-j) - 2; got[j+16] != want {
			t.Errorf("q4_1 value %d = %g, want %g", j+16, got[j+16], want)
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	values := make([]float32, 4*256)
	for i := range values {
		values[i] = float32(rng.NormFloat64())
	}
	for _, typ := range []gguf.TensorType{gguf.TensorQ8_0, gguf.TensorQ4_K} {
		raw, err := gguf.EncodeFloat32(typ, values)
		if err != nil {
			t.Fatal(err)
		}
		want, err := gguf.DecodeFloat32(typ, raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Dequantize(Type(typ), raw)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", typ, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s value %d = %g, want %g", typ, i, got[i], want[i])
			}
		}
	}
}

func TestDequantizeRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  Type
		raw  []byte
	}{
		{"unknown type", 99, make([]byte, 18)},
		{"negative type", -1, make([]byte, 18)},
		{"removed type", 4, make([]byte, 18)},
		{"partial block", Type(gguf.TensorQ4_0), make([]byte, 19)},
	} {
		if _, err := Dequantize(tc.typ, tc.raw); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}
