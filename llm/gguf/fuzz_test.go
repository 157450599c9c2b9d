package gguf

import (
	"bytes"
	"testing"
)

// FuzzRead feeds arbitrary bytes to Read. It must never panic; whatever it
// accepts must have readable tensor data, and writing it out again must
// give a file that reads back to the same bytes.
func FuzzRead(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		first := rewrite(t, file)
		again, err := Read(bytes.NewReader(first), int64(len(first)))
		if err != nil {
			t.Fatalf("cannot read a rewritten file: %v", err)
		}
		if len(again.Metadata) != len(file.Metadata) || len(again.Tensors) != len(file.Tensors) {
			t.Fatalf("counts changed in the round trip")
		}
		if second := rewrite(t, again); !bytes.Equal(first, second) {
			t.Fatalf("round trip is not stable")
		}
	})
}

// rewrite writes an accepted file again with the Writer.
func rewrite(t *testing.T, file *File) []byte {
	w := NewWriter()
	for _, kv := range file.Metadata {
		w.Set(kv.Key, kv.Value)
	}
	for _, ti := range file.Tensors {
		raw, err := file.TensorData(ti.Name)
		if err != nil {
			t.Fatalf("accepted file but tensor %s is unreadable: %v", ti.Name, err)
		}
		w.AddTensor(ti.Name, ti.Type, ti.Shape, raw)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatalf("cannot rewrite an accepted file: %v", err)
	}
	return buf.Bytes()
}

// fuzzSeeds are small valid files; the corpus under testdata/fuzz/FuzzRead
// holds damaged variants of them.
func fuzzSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	write := func(w *Writer) {
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, buf.Bytes())
	}
	w := NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("tokenizer.ggml.tokens", []string{"a", "b"})
	w.Set("x.f", []float32{1, 2})
	w.AddTensor("t", TensorF32, []int64{2, 2}, make([]byte, 16))
	write(w)

	w = NewWriter()
	w.Set(KeyAlignment, uint32(8))
	w.Set("b", []bool{true})
	w.Set("i", int64(-3))
	w.AddTensor("q", TensorQ8_0, []int64{32}, make([]byte, 34))
	w.AddTensor("h", TensorF16, []int64{3}, make([]byte, 6))
	write(w)

	write(NewWriter())
	return seeds
}
