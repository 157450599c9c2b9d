package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// allValues has one metadata value of every type the format has.
var allValues = []KV{
	{"test.u8", uint8(200)},
	{"test.i8", int8(-100)},
	{"test.u16", uint16(60000)},
	{"test.i16", int16(-30000)},
	{"test.u32", uint32(4000000000)},
	{"test.i32", int32(-2000000000)},
	{"test.f32", float32(3.25)},
	{"test.bool", true},
	{"test.str", "héllo, wörld"},
	{"test.u64", uint64(1) << 60},
	{"test.i64", int64(-1) << 60},
	{"test.f64", math.Pi},
	{"test.arr.u8", []uint8{1, 2, 255}},
	{"test.arr.i8", []int8{-1, 0, 127}},
	{"test.arr.u16", []uint16{1, 65535}},
	{"test.arr.i16", []int16{-32768, 7}},
	{"test.arr.u32", []uint32{7, 8, 9}},
	{"test.arr.i32", []int32{-7, 8}},
	{"test.arr.f32", []float32{0.5, -1.5}},
	{"test.arr.bool", []bool{true, false, true}},
	{"test.arr.str", []string{"a", "", "ĉ ĝ", "<|im_end|>"}},
	{"test.arr.u64", []uint64{1, math.MaxUint64}},
	{"test.arr.i64", []int64{math.MinInt64, 5}},
	{"test.arr.f64", []float64{1e300, -2}},
	{"test.arr.empty", []string{}},
}

func sampleWriter(t *testing.T) (*Writer, map[string][]byte) {
	t.Helper()
	w := NewWriter()
	w.Set("general.architecture", "llama")
	for _, kv := range allValues {
		w.Set(kv.Key, kv.Value)
	}
	data := map[string][]byte{}
	add := func(name string, typ TensorType, shape []int64) {
		size, err := tensorBytes(typ, shape)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(i*7 + len(name))
		}
		data[name] = b
		w.AddTensor(name, typ, shape, b)
	}
	add("a.weight", TensorF32, []int64{3})
	add("b.weight", TensorF16, []int64{5, 3})
	add("c.weight", TensorBF16, []int64{2, 2, 2})
	add("d.weight", TensorQ8_0, []int64{64, 3})
	add("e.weight", TensorQ4_K, []int64{256, 1, 1, 2})
	return w, data
}

func TestWriteReadRoundTrip(t *testing.T) {
	w, data := sampleWriter(t)
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != Version || f.Alignment != DefaultAlignment {
		t.Errorf("version %d alignment %d", f.Version, f.Alignment)
	}
	if f.Architecture() != "llama" {
		t.Errorf("architecture %q", f.Architecture())
	}
	if len(f.Metadata) != len(allValues)+1 {
		t.Fatalf("%d metadata pairs, want %d", len(f.Metadata), len(allValues)+1)
	}
	for i, kv := range allValues {
		got := f.Metadata[i+1]
		if got.Key != kv.Key || !reflect.DeepEqual(got.Value, kv.Value) {
			t.Errorf("pair %d: got %s=%#v, want %s=%#v", i, got.Key, got.Value, kv.Key, kv.Value)
		}
	}
	if f.DataOffset%DefaultAlignment != 0 {
		t.Errorf("data offset %d not aligned", f.DataOffset)
	}
	wantShapes := map[string][]int64{
		"a.weight": {3}, "b.weight": {5, 3}, "c.weight": {2, 2, 2}, "d.weight": {64, 3}, "e.weight": {256, 1, 1, 2},
	}
	if len(f.Tensors) != len(wantShapes) {
		t.Fatalf("%d tensors", len(f.Tensors))
	}
	for _, ti := range f.Tensors {
		if !reflect.DeepEqual(ti.Shape, wantShapes[ti.Name]) {
			t.Errorf("%s shape %v, want %v", ti.Name, ti.Shape, wantShapes[ti.Name])
		}
		if ti.Offset%DefaultAlignment != 0 {
			t.Errorf("%s offset %d not aligned", ti.Name, ti.Offset)
		}
		got, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data[ti.Name]) {
			t.Errorf("%s data differs", ti.Name)
		}
	}
	if d, _ := f.Tensor("d.weight"); d.Size != 2*3*34 || d.Elements() != 192 {
		t.Errorf("q8_0 tensor size %d elements %d", d.Size, d.Elements())
	}
	// The last tensor is padded too, as ggml does.
	if int64(buf.Len())%DefaultAlignment != 0 {
		t.Errorf("file size %d not a multiple of the alignment", buf.Len())
	}
}

func TestAccessors(t *testing.T) {
	w, _ := sampleWriter(t)
	f := writeAndRead(t, w)
	if v, err := f.GetUint32("test.u32"); err != nil || v != 4000000000 {
		t.Errorf("GetUint32 = %d, %v", v, err)
	}
	if v, err := f.GetString("test.str"); err != nil || v != "héllo, wörld" {
		t.Errorf("GetString = %q, %v", v, err)
	}
	if v, err := f.GetStrings("test.arr.str"); err != nil || len(v) != 4 {
		t.Errorf("GetStrings = %q, %v", v, err)
	}
	if v, err := f.GetFloat32("test.f32"); err != nil || v != 3.25 {
		t.Errorf("GetFloat32 = %v, %v", v, err)
	}
	if v, err := f.GetBool("test.bool"); err != nil || !v {
		t.Errorf("GetBool = %v, %v", v, err)
	}
	if _, err := f.GetUint32("missing.key"); !errors.Is(err, ErrNoKey) {
		t.Errorf("missing key: %v", err)
	}
	_, err := f.GetUint32("test.str")
	if err == nil || !strings.Contains(err.Error(), "has type str, want u32") {
		t.Errorf("wrong type: %v", err)
	}
	if _, err := f.TensorData("nope"); !errors.Is(err, ErrNoTensor) {
		t.Errorf("missing tensor: %v", err)
	}
}

func writeAndRead(t *testing.T, w *Writer) *File {
	t.Helper()
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCustomAlignment(t *testing.T) {
	w := NewWriter()
	w.Set(KeyAlignment, uint32(128))
	w.AddTensor("x", TensorF32, []int64{3}, make([]byte, 12))
	w.AddTensor("y", TensorF32, []int64{5}, make([]byte, 20))
	f := writeAndRead(t, w)
	if f.Alignment != 128 || f.DataOffset%128 != 0 {
		t.Fatalf("alignment %d data offset %d", f.Alignment, f.DataOffset)
	}
	if y, _ := f.Tensor("y"); y.Offset != 128 {
		t.Errorf("second tensor at %d, want 128", y.Offset)
	}
}

func TestWriterRejectsBadInput(t *testing.T) {
	cases := map[string]func(w *Writer){
		"empty key":         func(w *Writer) { w.Set("", uint32(1)) },
		"unsupported value": func(w *Writer) { w.Set("k", 3) },
		"bad alignment":     func(w *Writer) { w.Set(KeyAlignment, uint32(48)) },
		"alignment type":    func(w *Writer) { w.Set(KeyAlignment, uint64(64)) },
		"duplicate tensor": func(w *Writer) {
			w.AddTensor("x", TensorF32, []int64{1}, make([]byte, 4))
			w.AddTensor("x", TensorF32, []int64{1}, make([]byte, 4))
		},
		"long name":    func(w *Writer) { w.AddTensor(strings.Repeat("n", 64), TensorF32, []int64{1}, make([]byte, 4)) },
		"block size":   func(w *Writer) { w.AddTensor("q", TensorQ8_0, []int64{31}, make([]byte, 34)) },
		"zero dim":     func(w *Writer) { w.AddTensor("z", TensorF32, []int64{4, 0}, nil) },
		"unknown type": func(w *Writer) { w.AddTensor("u", TensorType(4), []int64{4}, nil) },
		"short data":   func(w *Writer) { w.AddTensor("s", TensorF32, []int64{4}, make([]byte, 15)) },
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			w := NewWriter()
			build(w)
			if _, err := w.WriteTo(io.Discard); err == nil {
				t.Fatal("WriteTo succeeded")
			}
		})
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.gguf")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A failing tensor writer must leave the old file and no temporary.
	w := NewWriter()
	w.AddTensorFunc("x", TensorF32, []int64{4}, func(io.Writer) error { return errors.New("boom") })
	if _, err := w.WriteFile(path); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("WriteFile error %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("old file clobbered: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary file left behind: %v", entries)
	}

	w, _ = sampleWriter(t)
	size, err := w.WriteFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Size != size {
		t.Errorf("size %d, WriteFile reported %d", f.Size, size)
	}
	if _, err := f.TensorData("b.weight"); err != nil {
		t.Error(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary file left behind: %v", entries)
	}
}

func TestReadRejectsEveryTruncation(t *testing.T) {
	w, _ := sampleWriter(t)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	full := buf.Bytes()
	// The last tensor's padding is not needed to load it; every shorter
	// prefix must be rejected.
	f, err := Read(bytes.NewReader(full), int64(len(full)))
	if err != nil {
		t.Fatal(err)
	}
	last := f.Tensors[len(f.Tensors)-1]
	minimal := int(f.DataOffset + last.Offset + last.Size)
	for n := 0; n < minimal; n++ {
		_, err := Read(bytes.NewReader(full[:n]), int64(n))
		if err == nil {
			t.Fatalf("prefix of %d bytes accepted", n)
		}
		if n >= 4 && !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix of %d bytes: %v, want ErrTruncated", n, err)
		}
	}
	if _, err := Read(bytes.NewReader(full[:minimal]), int64(minimal)); err != nil {
		t.Fatalf("unpadded file rejected: %v", err)
	}
}

func TestReadRejectsCorruption(t *testing.T) {
	valid := func() []byte {
		w := NewWriter()
		w.Set("general.architecture", "llama")
		w.AddTensor("x", TensorF32, []int64{4}, make([]byte, 16))
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	// Layout of valid(): magic 0, version 4, tensors 8, kvs 16, key len 24,
	// key 32 (20 bytes), type 52, str len 56, str 64 (5 bytes), tensor name
	// len 69, name 77, n_dims 78, ne0 82, type 90, offset 94.
	le := binary.LittleEndian
	cases := []struct {
		name   string
		mutate func(b []byte) []byte
		want   error
		msg    string
	}{
		{"magic", func(b []byte) []byte { copy(b, "PK\x03\x04"); return b }, ErrNotGGUF, `magic "PK\x03\x04"`},
		{"empty", func(b []byte) []byte { return b[:0] }, ErrNotGGUF, "0 bytes"},
		{"version 1", func(b []byte) []byte { le.PutUint32(b[4:], 1); return b }, ErrInvalid, "version 1"},
		{"big endian", func(b []byte) []byte { le.PutUint32(b[4:], 3<<24); return b }, ErrInvalid, "byte-swapped"},
		{"huge tensor count", func(b []byte) []byte { le.PutUint64(b[8:], 1<<62); return b }, ErrTruncated, "tensors cannot fit"},
		{"huge kv count", func(b []byte) []byte { le.PutUint64(b[16:], 1<<62); return b }, ErrTruncated, "metadata pairs cannot fit"},
		{"huge key length", func(b []byte) []byte { le.PutUint64(b[24:], 1<<62); return b }, ErrTruncated, "key of"},
		{"empty key", func(b []byte) []byte {
			le.PutUint64(b[24:], 0)
			return b
		}, ErrInvalid, "empty metadata key"},
		{"value type", func(b []byte) []byte { le.PutUint32(b[52:], 13); return b }, ErrInvalid, "unknown value type 13"},
		{"huge string", func(b []byte) []byte { le.PutUint64(b[56:], math.MaxUint64); return b }, ErrTruncated, "runs past the end"},
		{"dims", func(b []byte) []byte { le.PutUint32(b[78:], 5); return b }, ErrInvalid, "5 dimensions"},
		{"negative dim", func(b []byte) []byte { le.PutUint64(b[82:], math.MaxUint64); return b }, ErrInvalid, "must be positive"},
		{"zero dim", func(b []byte) []byte { le.PutUint64(b[82:], 0); return b }, ErrInvalid, "must be positive"},
		{"huge dim", func(b []byte) []byte { le.PutUint64(b[82:], 1<<40); return b }, ErrTruncated, "ends at byte"},
		{"removed type", func(b []byte) []byte { le.PutUint32(b[90:], 4); return b }, ErrInvalid, "unknown tensor type 4"},
		{"offset", func(b []byte) []byte { le.PutUint64(b[94:], 32); return b }, ErrInvalid, "offset 32, want 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.mutate(valid())
			_, err := Read(bytes.NewReader(b), int64(len(b)))
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want %v containing %q", err, c.want, c.msg)
			}
		})
	}
}

// TestReadRejectsBadMetadata covers files the Writer refuses to produce,
// encoded by hand.
func TestReadRejectsBadMetadata(t *testing.T) {
	cases := []struct {
		name string
		kvs  []KV
		msg  string
	}{
		{"alignment type", []KV{{KeyAlignment, uint64(32)}}, "general.alignment has type u64, want u32"},
		{"alignment value", []KV{{KeyAlignment, uint32(24)}}, "not a power of two"},
		{"duplicate key", []KV{{"k", uint8(1)}, {"k", uint8(2)}}, `duplicate metadata key "k"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			e := &encoder{w: &buf}
			e.raw([]byte(Magic))
			e.u32(Version)
			e.u64(0)
			e.u64(uint64(len(c.kvs)))
			for _, kv := range c.kvs {
				e.kv(kv)
			}
			_, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want %q", err, c.msg)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	path := filepath.Join(dir, "text.gguf")
	os.WriteFile(path, []byte("hello world, this is not a model"), 0o644)
	_, err := Open(path)
	if !errors.Is(err, ErrNotGGUF) || !strings.Contains(err.Error(), path) {
		t.Errorf("text file: %v", err)
	}
}
