package cgo

/*
#include <stdlib.h>
#include "abi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"
)

// Backend is a ggml compute backend: the CPU, or a GPU whose backend
// library was loaded (LoadBackends). It must be used by one goroutine at a
// time.
type Backend struct {
	c   C.ggml_backend_t
	cpu bool
}

// NewBackend starts a backend on the first GPU when gpu is set and one is
// available, else on the CPU with the given number of threads.
func NewBackend(gpu bool, threads int) (*Backend, error) {
	Init()
	if gpu {
		for _, typ := range []C.enum_ggml_backend_dev_type{C.GGML_BACKEND_DEVICE_TYPE_GPU, C.GGML_BACKEND_DEVICE_TYPE_IGPU} {
			if c := C.ggml_backend_init_by_type(typ, nil); c != nil {
				return &Backend{c: c}, nil
			}
		}
	}
	c := C.ggml_backend_cpu_init()
	if c == nil {
		return nil, errors.New("ggml could not start the CPU backend")
	}
	if threads > 0 {
		C.ggml_backend_cpu_set_n_threads(c, C.int(threads))
	}
	return &Backend{c: c, cpu: true}, nil
}

// CPU reports whether the backend is ggml's CPU backend, the only one that
// runs custom operations such as the BLAS products.
func (b *Backend) CPU() bool { return b.cpu }

// Free stops the backend. Buffers allocated on it must be freed first.
func (b *Backend) Free() {
	if b.c != nil {
		C.ggml_backend_free(b.c)
		b.c = nil
	}
}

// Name is the backend's name, e.g. "CPU" or "CUDA0".
func (b *Backend) Name() string { return C.GoString(C.ggml_backend_name(b.c)) }

// Buffer is backend memory holding the data of a context's tensors.
type Buffer struct{ c C.ggml_backend_buffer_t }

// Alloc places every tensor of the context that has no data yet in one new
// buffer.
func (b *Backend) Alloc(x *GraphContext) (*Buffer, error) {
	c := C.ggml_backend_alloc_ctx_tensors(x.c, b.c)
	if c == nil {
		return nil, fmt.Errorf("%s: could not allocate the tensors (out of memory?)", b.Name())
	}
	return &Buffer{c: c}, nil
}

// Free releases the buffer; its tensors lose their data.
func (buf *Buffer) Free() {
	if buf.c != nil {
		C.ggml_backend_buffer_free(buf.c)
		buf.c = nil
	}
}

// Compute runs every node of the graph, whose tensors must all be
// allocated.
func (b *Backend) Compute(g *Graph) error {
	if err := b.checkGraph(g); err != nil {
		return err
	}
	return computeStatus(C.ggml_backend_graph_compute(b.c, g.c))
}

// checkGraph refuses a graph with a node that has no memory, or that the
// backend cannot run: a GPU backend aborts the process on an operation it
// lacks, where the CPU backend runs them all.
func (b *Backend) checkGraph(g *Graph) error {
	for i := range g.Len() {
		n := g.Node(i)
		if !n.Allocated() {
			return fmt.Errorf("compute: node %d (%v) has no memory", i, n)
		}
		if !b.cpu && !bool(C.ggml_backend_supports_op(b.c, n.c)) {
			from := ""
			if src := (Tensor{n.c.src[0]}); src.Valid() {
				from = fmt.Sprintf(" from %v", src)
			}
			return fmt.Errorf("compute: %s cannot run %s giving %v%s: train on the CPU", b.Name(), C.GoString(C.ggml_op_desc(n.c)), n, from)
		}
	}
	return nil
}

func computeStatus(st C.enum_ggml_status) error {
	switch st {
	case C.GGML_STATUS_SUCCESS:
		return nil
	case C.GGML_STATUS_ABORTED:
		return errors.New("compute: aborted")
	case C.GGML_STATUS_ALLOC_FAILED:
		return errors.New("compute: out of memory")
	default:
		return fmt.Errorf("compute: ggml status %d", int(st))
	}
}

// OpTimes is where a backend's time went, by kind of operation: the
// operation and the types of its operands, e.g. "MUL_MAT bf16 x f32".
type OpTimes map[string]*OpTime

// OpTime is the time spent in one kind of operation.
type OpTime struct {
	Calls   int
	Seconds float64
}

// ComputeTimed runs the graph as Compute does, but one node at a time,
// waiting for each to finish, and adds each node's time to times. It is
// slower than Compute (no overlap, and a GPU backend fuses no operations
// across nodes), and is meant for finding where a step's time goes.
func (b *Backend) ComputeTimed(g *Graph, times OpTimes) error {
	if err := b.checkGraph(g); err != nil {
		return err
	}
	x, err := NewGraphContext(1, 1)
	if err != nil {
		return err
	}
	defer x.Free()
	one := x.NewGraph(1)
	for i := range g.Len() {
		n := g.Node(i)
		C.ggml_graph_clear(one.c)
		C.ggml_graph_add_node(one.c, n.c)
		start := time.Now()
		if err := computeStatus(C.ggml_backend_graph_compute(b.c, one.c)); err != nil {
			return fmt.Errorf("node %d (%v): %w", i, n, err)
		}
		d := time.Since(start).Seconds()
		key := opKind(n)
		t := times[key]
		if t == nil {
			t = &OpTime{}
			times[key] = t
		}
		t.Calls++
		t.Seconds += d
	}
	return nil
}

// opKind names a node's operation and the types of its operands.
func opKind(n Tensor) string {
	kind := C.GoString(C.ggml_op_desc(n.c))
	for j, src := range n.c.src[:2] {
		if src == nil {
			break
		}
		sep := " "
		if j > 0 {
			sep = " x "
		}
		kind += sep + Type(src._type).String()
	}
	return kind
}

// Allocator places the intermediate tensors of graphs in one buffer that
// it grows as needed, reusing the memory of a node once every node that
// reads it has run (inputs and outputs excepted).
type Allocator struct {
	c C.ggml_gallocr_t
}

// NewAllocator makes a graph allocator for the backend's memory.
func (b *Backend) NewAllocator() *Allocator {
	return &Allocator{c: C.ggml_gallocr_new(C.ggml_backend_get_default_buffer_type(b.c))}
}

// Alloc gives memory to every tensor of the graph that has none.
func (a *Allocator) Alloc(g *Graph) error {
	if !C.ggml_gallocr_alloc_graph(a.c, g.c) {
		return errors.New("graph allocation failed (out of memory?)")
	}
	return nil
}

// Size is the size of the allocator's buffer in bytes.
func (a *Allocator) Size() int64 { return int64(C.ggml_gallocr_get_buffer_size(a.c, 0)) }

// MeasureGraph returns the size of the buffer an Allocator needs for the
// graph, in bytes, without allocating it. (It measures with an allocator
// of its own: the pinned ggml leaves an allocator that only measured
// without buffers, and its next allocation then crashes.)
func (b *Backend) MeasureGraph(g *Graph) int64 {
	a := b.NewAllocator()
	defer a.Free()
	var size C.size_t
	C.ggml_gallocr_reserve_n_size(a.c, g.c, nil, nil, &size)
	return int64(size)
}

// Free releases the allocator and its buffer.
func (a *Allocator) Free() {
	if a.c != nil {
		C.ggml_gallocr_free(a.c)
		a.c = nil
	}
}

// checkData panics unless t is allocated and n bytes fit it from offset.
func (t Tensor) checkData(op string, offset, n int64) {
	if !t.Allocated() {
		opPanic(op, "%v has no memory", t)
	}
	if offset < 0 || n < 0 || offset+n > t.Bytes() {
		opPanic(op, "%d bytes at offset %d do not fit %v (%d bytes)", n, offset, t, t.Bytes())
	}
}

// SetBytes copies raw data into the tensor from byte offset.
func (t Tensor) SetBytes(data []byte, offset int64) {
	t.set(unsafe.Pointer(unsafe.SliceData(data)), offset, int64(len(data)))
}

// SetFloat32 copies values into an F32 tensor from element offset.
func (t Tensor) SetFloat32(values []float32, offset int64) {
	t.checkType("tensor_set", TypeF32)
	t.set(unsafe.Pointer(unsafe.SliceData(values)), 4*offset, 4*int64(len(values)))
}

// SetInt32 copies values into an I32 tensor from element offset.
func (t Tensor) SetInt32(values []int32, offset int64) {
	t.checkType("tensor_set", TypeI32)
	t.set(unsafe.Pointer(unsafe.SliceData(values)), 4*offset, 4*int64(len(values)))
}

// Float32 copies len(dst) values of an F32 tensor from element offset into
// dst.
func (t Tensor) Float32(dst []float32, offset int64) {
	t.checkType("tensor_get", TypeF32)
	t.checkData("tensor_get", 4*offset, 4*int64(len(dst)))
	if len(dst) > 0 {
		C.ggml_backend_tensor_get(t.c, unsafe.Pointer(&dst[0]), C.size_t(4*offset), C.size_t(4*len(dst)))
	}
}

// set copies n bytes from src into the tensor from byte offset.
func (t Tensor) set(src unsafe.Pointer, offset, n int64) {
	t.checkData("tensor_set", offset, n)
	if n > 0 {
		C.ggml_backend_tensor_set(t.c, src, C.size_t(offset), C.size_t(n))
	}
}

func (t Tensor) checkType(op string, typ Type) {
	if t.Type() != typ {
		opPanic(op, "%v is not %s", t, typ)
	}
}
