package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/agentrl/agentrl/internal/atomicfile"
)

// Writer builds a GGUF file: metadata first, then tensor descriptions, then
// the tensor data, each tensor padded to the alignment. Tensor data can be
// produced while writing (AddTensorFunc), so a file larger than memory can
// be streamed.
//
// Set and AddTensor record the first error they meet; WriteTo and WriteFile
// return it, so a sequence of calls needs one error check.
type Writer struct {
	metadata  []KV
	keys      map[string]int
	tensors   []pendingTensor
	names     map[string]bool
	alignment int64
	err       error
}

type pendingTensor struct {
	info  TensorInfo
	write func(io.Writer) error
}

// NewWriter returns an empty Writer with the default alignment.
func NewWriter() *Writer {
	return &Writer{keys: map[string]int{}, names: map[string]bool{}, alignment: DefaultAlignment}
}

// Err returns the first error recorded by Set or AddTensor.
func (w *Writer) Err() error { return w.err }

func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// Set adds a metadata pair, or replaces the value of an existing key in
// place. value must have one of the Go types listed for KV. Setting
// general.alignment (a u32 power of two) changes the data alignment.
func (w *Writer) Set(key string, value any) {
	if key == "" || len(key) > maxKeyLen {
		w.fail(fmt.Errorf("metadata key %q: length must be 1 to %d bytes", key, maxKeyLen))
		return
	}
	if _, _, ok := TypeOf(value); !ok {
		w.fail(fmt.Errorf("metadata key %s: %s", key, typeName(value)))
		return
	}
	if key == KeyAlignment {
		a, ok := value.(uint32)
		if !ok || a == 0 || a&(a-1) != 0 {
			w.fail(fmt.Errorf("%s must be a u32 power of two, got %s %v", KeyAlignment, typeName(value), value))
			return
		}
		w.alignment = int64(a)
	}
	if i, ok := w.keys[key]; ok {
		w.metadata[i].Value = value
		return
	}
	w.keys[key] = len(w.metadata)
	w.metadata = append(w.metadata, KV{Key: key, Value: value})
}

// AddTensor adds a tensor whose data is already in memory. shape is in ggml
// order (row length first); data must have exactly the size the shape and
// type imply.
func (w *Writer) AddTensor(name string, typ TensorType, shape []int64, data []byte) {
	w.AddTensorFunc(name, typ, shape, func(out io.Writer) error {
		_, err := out.Write(data)
		return err
	})
}

// AddTensorFunc adds a tensor whose data write produces when the file is
// written. write must write exactly the tensor's size in bytes.
func (w *Writer) AddTensorFunc(name string, typ TensorType, shape []int64, write func(io.Writer) error) {
	if name == "" || len(name) > MaxTensorName {
		w.fail(fmt.Errorf("tensor name %q: length must be 1 to %d bytes", name, MaxTensorName))
		return
	}
	if w.names[name] {
		w.fail(fmt.Errorf("tensor %s added twice", name))
		return
	}
	size, err := tensorBytes(typ, shape)
	if err != nil {
		w.fail(fmt.Errorf("tensor %s: %w", name, err))
		return
	}
	w.names[name] = true
	info := TensorInfo{Name: name, Shape: append([]int64(nil), shape...), Type: typ, Size: size}
	w.tensors = append(w.tensors, pendingTensor{info: info, write: write})
}

// WriteTo writes the file to out and returns the number of bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	e := &encoder{w: out}
	e.raw([]byte(Magic))
	e.u32(Version)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.metadata)))
	for _, kv := range w.metadata {
		e.kv(kv)
	}
	var offset int64
	for i := range w.tensors {
		t := &w.tensors[i].info
		t.Offset = offset
		e.str(t.Name)
		e.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			e.u64(uint64(d))
		}
		e.u32(uint32(t.Type))
		e.u64(uint64(t.Offset))
		offset += padTo(t.Size, w.alignment)
	}
	e.pad(w.alignment)
	for _, t := range w.tensors {
		if e.err != nil {
			break
		}
		cw := &countingWriter{w: e}
		if err := t.write(cw); err != nil {
			return e.n, fmt.Errorf("write tensor %s: %w", t.info.Name, err)
		}
		if cw.n != t.info.Size {
			return e.n, fmt.Errorf("write tensor %s: wrote %d bytes, want %d", t.info.Name, cw.n, t.info.Size)
		}
		e.pad(w.alignment)
	}
	return e.n, e.err
}

// WriteFile writes the file to path atomically (atomicfile.Write): a
// temporary file in the same directory, synced and renamed over path once
// complete, so readers never see a partial model. It returns the file
// size.
func (w *Writer) WriteFile(path string) (size int64, err error) {
	if w.err != nil {
		return 0, w.err
	}
	err = atomicfile.Write(path, func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if size, err = w.WriteTo(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return 0, err
	}
	return size, nil
}

// encoder writes little-endian GGUF fields, remembering the first error and
// the number of bytes written (for padding).
type encoder struct {
	w   io.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.n += int64(n)
	e.err = err
	return n, err
}

func (e *encoder) raw(p []byte) { e.Write(p) }

func (e *encoder) u8(v uint8) { e.buf[0] = v; e.Write(e.buf[:1]) }

func (e *encoder) u16(v uint16) {
	binary.LittleEndian.PutUint16(e.buf[:], v)
	e.Write(e.buf[:2])
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], v)
	e.Write(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], v)
	e.Write(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.Write([]byte(s))
}

func (e *encoder) pad(alignment int64) {
	var zeros [64]byte
	for n := padTo(e.n, alignment) - e.n; n > 0 && e.err == nil; {
		k := min(n, int64(len(zeros)))
		e.Write(zeros[:k])
		n -= k
	}
}

func (e *encoder) kv(kv KV) {
	e.str(kv.Key)
	typ, elem, _ := TypeOf(kv.Value)
	e.u32(uint32(typ))
	if typ != TypeArray {
		e.scalar(kv.Value)
		return
	}
	e.u32(uint32(elem))
	switch a := kv.Value.(type) {
	case []uint8:
		e.u64(uint64(len(a)))
		e.Write(a)
	case []int8:
		writeSlice(e, a)
	case []uint16:
		writeSlice(e, a)
	case []int16:
		writeSlice(e, a)
	case []uint32:
		writeSlice(e, a)
	case []int32:
		writeSlice(e, a)
	case []float32:
		writeSlice(e, a)
	case []bool:
		writeSlice(e, a)
	case []string:
		writeSlice(e, a)
	case []uint64:
		writeSlice(e, a)
	case []int64:
		writeSlice(e, a)
	case []float64:
		writeSlice(e, a)
	}
}

func writeSlice[T any](e *encoder, a []T) {
	e.u64(uint64(len(a)))
	for _, v := range a {
		e.scalar(v)
	}
}

func (e *encoder) scalar(v any) {
	switch v := v.(type) {
	case uint8:
		e.u8(v)
	case int8:
		e.u8(uint8(v))
	case bool:
		if v {
			e.u8(1)
		} else {
			e.u8(0)
		}
	case uint16:
		e.u16(v)
	case int16:
		e.u16(uint16(v))
	case uint32:
		e.u32(v)
	case int32:
		e.u32(uint32(v))
	case float32:
		e.u32(math.Float32bits(v))
	case uint64:
		e.u64(v)
	case int64:
		e.u64(uint64(v))
	case float64:
		e.u64(math.Float64bits(v))
	case string:
		e.str(v)
	}
}

// countingWriter counts the bytes a tensor writer produces.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
