package cgo

/*
#include <stdlib.h>
#include "abi.h"
*/
import "C"

import (
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// This file wraps the part of ggml the trainer builds its compute graphs
// with: contexts that hold tensor metadata, tensors, the operations of the
// llama-family forward pass and the backward operations ggml provides for
// them, and graphs.
//
// ggml checks the shapes of an operation with GGML_ASSERT, which ends the
// process. Every wrapper here checks the same conditions first and panics
// with an *OpError instead, so that a mistake in a graph is a Go panic with
// a stack trace that the graph builder can recover into an error.

// Type is a ggml tensor element type.
type Type int32

// Element types the trainer creates; it reads weights of any type ggml
// knows as Type(n) of their GGUF type number.
const (
	TypeF32 Type = C.GGML_TYPE_F32
	TypeF16 Type = C.GGML_TYPE_F16
	TypeI32 Type = C.GGML_TYPE_I32

	// typeCount bounds the type numbers ggml knows; it asserts on others.
	typeCount Type = C.GGML_TYPE_COUNT
)

// String is ggml's name of the type, e.g. "q8_0".
func (t Type) String() string { return C.GoString(C.ggml_type_name(C.enum_ggml_type(t))) }

// BlockSize is the number of elements stored together in one block (1 for
// plain float and integer types).
func (t Type) BlockSize() int64 { return int64(C.ggml_blck_size(C.enum_ggml_type(t))) }

// BlockBytes is the size of one block in bytes.
func (t Type) BlockBytes() int64 { return int64(C.ggml_type_size(C.enum_ggml_type(t))) }

// RoPE modes (GGML_ROPE_TYPE_*): which elements of a head are rotated as
// pairs.
const (
	RopeNormal = 0 // adjacent pairs (x0, x1), (x2, x3), ... (Llama)
	RopeNeoX   = 2 // halves (x0, x_{d/2}), ... (GPT-NeoX, Qwen)
)

// OpError reports an operation whose operands ggml would reject.
type OpError struct {
	Op  string
	Msg string
}

func (e *OpError) Error() string { return "ggml " + e.Op + ": " + e.Msg }

func opPanic(op, format string, args ...any) {
	panic(&OpError{Op: op, Msg: fmt.Sprintf(format, args...)})
}

// GraphContext (a ggml_context) holds the metadata of up to a fixed number
// of tensors and graphs. Tensor data lives in backend buffers (Backend.Alloc
// or an Allocator), not in the context.
type GraphContext struct {
	c        *C.struct_ggml_context
	capacity int // tensors the context has room for
	used     int
	graphs   []int // sizes of the graphs it has room for, not yet made
}

// NewGraphContext makes a context with room for maxTensors tensors and for
// one graph of each of the given sizes (in nodes).
func NewGraphContext(maxTensors int, graphSizes ...int) (*GraphContext, error) {
	Init()
	if maxTensors <= 0 {
		return nil, fmt.Errorf("ggml context: %d tensors", maxTensors)
	}
	size := C.size_t(maxTensors) * C.ggml_tensor_overhead()
	for _, n := range graphSizes {
		size += C.ggml_graph_overhead_custom(C.size_t(n), false)
	}
	c := C.ggml_init(C.struct_ggml_init_params{mem_size: size, mem_buffer: nil, no_alloc: true})
	if c == nil {
		return nil, fmt.Errorf("ggml context of %d bytes: out of memory", int(size))
	}
	return &GraphContext{c: c, capacity: maxTensors, graphs: graphSizes}, nil
}

// Free releases the context and the metadata of its tensors and graphs.
func (x *GraphContext) Free() {
	if x.c != nil {
		C.ggml_free(x.c)
		x.c = nil
	}
}

// Tensors is the number of tensors made so far.
func (x *GraphContext) Tensors() int { return x.used }

// reserve counts a new tensor; it panics before ggml would run out of room.
func (x *GraphContext) reserve(op string) {
	if x.used >= x.capacity {
		opPanic(op, "the context is full (%d tensors)", x.capacity)
	}
	x.used++
}

// Tensor is a ggml tensor: an n-dimensional array (up to 4 dimensions) and,
// for the result of an operation, how to compute it. Dimensions are in
// ggml order: Ne(0) is the length of a row.
type Tensor struct{ c *C.struct_ggml_tensor }

// Valid reports whether t refers to a tensor.
func (t Tensor) Valid() bool { return t.c != nil }

// Type is the element type.
func (t Tensor) Type() Type { return Type(t.c._type) }

// Ne is the number of elements along dimension i.
func (t Tensor) Ne(i int) int64 { return int64(t.c.ne[i]) }

// Nb is the stride of dimension i in bytes.
func (t Tensor) Nb(i int) int64 { return int64(t.c.nb[i]) }

// Shape is the number of elements along each dimension.
func (t Tensor) Shape() [4]int64 { return [4]int64{t.Ne(0), t.Ne(1), t.Ne(2), t.Ne(3)} }

// Elements is the total number of elements.
func (t Tensor) Elements() int64 { return int64(C.ggml_nelements(t.c)) }

// Bytes is the size of the tensor's data.
func (t Tensor) Bytes() int64 { return int64(C.ggml_nbytes(t.c)) }

// Contiguous reports whether the elements are stored densely in order.
func (t Tensor) Contiguous() bool { return bool(C.ggml_is_contiguous(t.c)) }

// Name is the tensor's name.
func (t Tensor) Name() string { return C.GoString(&t.c.name[0]) }

// SetName names the tensor (ggml keeps the first 63 bytes).
func (t Tensor) SetName(name string) Tensor {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	C.ggml_set_name(t.c, cname)
	return t
}

// SetInput marks the tensor as a graph input: the graph allocator places
// it before anything else, so its data can be set before computing.
func (t Tensor) SetInput() { C.ggml_set_input(t.c) }

// SetOutput marks the tensor as a graph output: the graph allocator never
// reuses its memory for later nodes.
func (t Tensor) SetOutput() { C.ggml_set_output(t.c) }

// Allocated reports whether the tensor has data in a backend buffer.
func (t Tensor) Allocated() bool { return t.c.buffer != nil && t.c.data != nil }

func (t Tensor) String() string {
	return fmt.Sprintf("%s %s[%d,%d,%d,%d]", t.Name(), t.Type(), t.Ne(0), t.Ne(1), t.Ne(2), t.Ne(3))
}

func (t Tensor) transposed() bool { return t.Nb(0) > t.Nb(1) }

func (t Tensor) rowsContiguous() bool { return t.Nb(0) == t.Type().BlockBytes() }

func sameShape(a, b Tensor) bool { return a.Shape() == b.Shape() }

// canRepeat reports whether b can be broadcast (tiled) to a's shape.
func canRepeat(b, a Tensor) bool {
	for i := range 4 {
		if b.Ne(i) == 0 || a.Ne(i)%b.Ne(i) != 0 {
			return false
		}
	}
	return true
}

// NewTensor makes a tensor of the given type and shape (1 to 4
// dimensions, in ggml order).
func (x *GraphContext) NewTensor(typ Type, shape ...int64) Tensor {
	if len(shape) < 1 || len(shape) > 4 {
		opPanic("new_tensor", "%d dimensions", len(shape))
	}
	for _, n := range shape {
		if n <= 0 {
			opPanic("new_tensor", "shape %v has a dimension <= 0", shape)
		}
	}
	if bs := typ.BlockSize(); shape[0]%bs != 0 {
		opPanic("new_tensor", "row length %d of a %s tensor is not a multiple of its block size %d", shape[0], typ, bs)
	}
	x.reserve("new_tensor")
	ct := C.enum_ggml_type(typ)
	var t *C.struct_ggml_tensor
	switch len(shape) {
	case 1:
		t = C.ggml_new_tensor_1d(x.c, ct, C.int64_t(shape[0]))
	case 2:
		t = C.ggml_new_tensor_2d(x.c, ct, C.int64_t(shape[0]), C.int64_t(shape[1]))
	case 3:
		t = C.ggml_new_tensor_3d(x.c, ct, C.int64_t(shape[0]), C.int64_t(shape[1]), C.int64_t(shape[2]))
	default:
		t = C.ggml_new_tensor_4d(x.c, ct, C.int64_t(shape[0]), C.int64_t(shape[1]), C.int64_t(shape[2]), C.int64_t(shape[3]))
	}
	return Tensor{t}
}

// Add is a + b, with b broadcast (tiled) over a's shape.
func (x *GraphContext) Add(a, b Tensor) Tensor {
	if !canRepeat(b, a) {
		opPanic("add", "%v cannot broadcast to %v", b, a)
	}
	x.reserve("add")
	return Tensor{C.ggml_add(x.c, a.c, b.c)}
}

// Mul is a * b element-wise, with b broadcast (tiled) over a's shape.
func (x *GraphContext) Mul(a, b Tensor) Tensor {
	if !canRepeat(b, a) {
		opPanic("mul", "%v cannot broadcast to %v", b, a)
	}
	x.reserve("mul")
	return Tensor{C.ggml_mul(x.c, a.c, b.c)}
}

// Scale is s * a.
func (x *GraphContext) Scale(a Tensor, s float32) Tensor {
	if !a.Contiguous() {
		opPanic("scale", "%v is not contiguous", a)
	}
	x.reserve("scale")
	return Tensor{C.ggml_scale(x.c, a.c, C.float(s))}
}

// SiLU is a * sigmoid(a).
func (x *GraphContext) SiLU(a Tensor) Tensor {
	if !a.rowsContiguous() {
		opPanic("silu", "%v has non-contiguous rows", a)
	}
	x.reserve("silu")
	return Tensor{C.ggml_silu(x.c, a.c)}
}

// SiLUBack is the gradient of SiLU at input in, given the gradient grad
// of its output.
func (x *GraphContext) SiLUBack(grad, in Tensor) Tensor {
	if !sameShape(grad, in) || !grad.Contiguous() || !in.Contiguous() {
		opPanic("silu_back", "gradient %v and input %v must be contiguous and of one shape", grad, in)
	}
	x.reserve("silu_back")
	return Tensor{C.ggml_silu_back(x.c, grad.c, in.c)}
}

// RMSNorm divides each row of a by its root mean square (plus eps).
func (x *GraphContext) RMSNorm(a Tensor, eps float32) Tensor {
	if a.Type() != TypeF32 || !a.rowsContiguous() {
		opPanic("rms_norm", "%v must be F32 with contiguous rows", a)
	}
	x.reserve("rms_norm")
	return Tensor{C.ggml_rms_norm(x.c, a.c, C.float(eps))}
}

// RMSNormBack is the gradient of RMSNorm at input in, given the gradient
// grad of its output.
//
// The graph allocator may compute this operation in place, over grad when
// nothing else reads it, but ggml's CPU kernel copies in over its output
// before it has finished reading grad, which then gives a wrong result.
// grad is therefore marked as an output, which the allocator never
// overwrites; its memory lives until the graph ends.
func (x *GraphContext) RMSNormBack(grad, in Tensor, eps float32) Tensor {
	if !sameShape(grad, in) || !grad.rowsContiguous() || !in.rowsContiguous() {
		opPanic("rms_norm_back", "gradient %v and input %v must have one shape and contiguous rows", grad, in)
	}
	grad.SetOutput()
	x.reserve("rms_norm_back")
	return Tensor{C.ggml_rms_norm_back(x.c, grad.c, in.c, C.float(eps))}
}

// MulMat multiplies b by the transpose of a, contracting dimension 0 of
// both: for a [k, m] and b [k, n] the result is [m, n] with
// result[i, j] = sum over l of a[l, i] * b[l, j]. Dimensions 2 and 3 of a
// are broadcast over those of b (grouped-query attention): a head h of b
// meets head h / (b.Ne(2)/a.Ne(2)) of a.
func (x *GraphContext) MulMat(a, b Tensor) Tensor {
	switch {
	case a.Ne(0) != b.Ne(0):
		opPanic("mul_mat", "inner dimensions differ: %v and %v", a, b)
	case b.Ne(2)%a.Ne(2) != 0 || b.Ne(3)%a.Ne(3) != 0:
		opPanic("mul_mat", "%v does not broadcast over %v", a, b)
	case a.transposed() || !a.rowsContiguous():
		opPanic("mul_mat", "%v must have contiguous rows", a)
	case b.Type() != TypeF32:
		opPanic("mul_mat", "%v must be F32", b)
	}
	x.reserve("mul_mat")
	return Tensor{C.ggml_mul_mat(x.c, a.c, b.c)}
}

// OutProd sums outer products over dimension 1: for a [m, k] and b [n, k]
// the result is [m, n] with result[i, j] = sum over l of a[i, l] * b[j, l],
// for each index of dimensions 2 and 3 (a's broadcast over b's).
// It contracts the dimension MulMat cannot without transposing both
// operands (the tokens, when computing a weight gradient).
func (x *GraphContext) OutProd(a, b Tensor) Tensor {
	switch {
	case a.Ne(1) != b.Ne(1) || b.Ne(2)%a.Ne(2) != 0 || b.Ne(3)%a.Ne(3) != 0:
		opPanic("out_prod", "%v and %v differ in columns or do not broadcast", a, b)
	case a.Type() != TypeF32 || b.Type() != TypeF32 || !a.rowsContiguous():
		opPanic("out_prod", "%v and %v must be F32, the first with contiguous rows", a, b)
	}
	x.reserve("out_prod")
	return Tensor{C.ggml_out_prod(x.c, a.c, b.c)}
}

// RepeatBack sums the tiles of a into b's shape: the gradient of
// broadcasting a tensor of b's shape to a's.
func (x *GraphContext) RepeatBack(a, b Tensor) Tensor {
	if !canRepeat(b, a) || !a.rowsContiguous() || a.Type() != TypeF32 {
		opPanic("repeat_back", "%v does not tile %v", a, b)
	}
	x.reserve("repeat_back")
	return Tensor{C.ggml_repeat_back(x.c, a.c, b.c)}
}

// Cont copies a (a view, transposed or permuted) into a contiguous tensor.
func (x *GraphContext) Cont(a Tensor) Tensor {
	x.reserve("cont")
	return Tensor{C.ggml_cont(x.c, a.c)}
}

// Copy copies a into b (converting the type) and returns a view of b.
func (x *GraphContext) Copy(a, b Tensor) Tensor {
	if a.Elements() != b.Elements() {
		opPanic("cpy", "%v and %v differ in size", a, b)
	}
	x.reserve("cpy")
	return Tensor{C.ggml_cpy(x.c, a.c, b.c)}
}

// Cast converts a to another element type (dequantizing or rounding) in
// a new contiguous tensor.
func (x *GraphContext) Cast(a Tensor, typ Type) Tensor {
	if !a.Contiguous() && a.Type() != TypeF32 {
		opPanic("cast", "%v must be contiguous", a)
	}
	x.reserve("cast")
	return Tensor{C.ggml_cast(x.c, a.c, C.enum_ggml_type(typ))}
}

// View1D views n elements of the contiguous tensor a from element offset.
func (x *GraphContext) View1D(a Tensor, n, offset int64) Tensor {
	if !a.Contiguous() || a.Type().BlockSize() != 1 || offset < 0 || n <= 0 || offset+n > a.Elements() {
		opPanic("view_1d", "%d elements from %d do not fit %v", n, offset, a)
	}
	x.reserve("view_1d")
	return Tensor{C.ggml_view_1d(x.c, a.c, C.int64_t(n), C.size_t(offset*a.Type().BlockBytes()))}
}

// Columns views the first n elements of every row of the matrix a (a
// tensor of n x a.Ne(1) with a's row stride).
func (x *GraphContext) Columns(a Tensor, n int64) Tensor {
	if a.Ne(2) != 1 || a.Ne(3) != 1 || a.Type().BlockSize() != 1 || n <= 0 || n > a.Ne(0) {
		opPanic("view_2d", "%d leading elements of the rows of %v", n, a)
	}
	x.reserve("view_2d")
	return Tensor{C.ggml_view_2d(x.c, a.c, C.int64_t(n), C.int64_t(a.Ne(1)), C.size_t(a.Nb(1)), 0)}
}

// Slice is the view of a restricted to indices [from, from+n) of
// dimension dim, with a's strides of dimensions 1 to 3 (so a slice of a
// permuted view keeps its layout). a's rows must have unit stride, which
// ggml's views assume.
func (x *GraphContext) Slice(a Tensor, dim int, from, n int64) Tensor {
	if dim < 0 || dim > 3 || from < 0 || n <= 0 || from+n > a.Ne(dim) || !a.rowsContiguous() || (dim == 0 && a.Type().BlockSize() != 1) {
		opPanic("view_4d", "indices [%d, %d) of dimension %d of %v", from, from+n, dim, a)
	}
	ne := a.Shape()
	ne[dim] = n
	x.reserve("view_4d")
	return Tensor{C.ggml_view_4d(x.c, a.c, C.int64_t(ne[0]), C.int64_t(ne[1]), C.int64_t(ne[2]), C.int64_t(ne[3]),
		C.size_t(a.Nb(1)), C.size_t(a.Nb(2)), C.size_t(a.Nb(3)), C.size_t(from*a.Nb(dim)))}
}

// WriteSlice writes b into a in place, at indices from.. of dimension dim
// (b's size there; the other dimensions equal), and returns a: later
// operations that read the result see every write before them. a must be
// a contiguous F32 tensor, b have unit-stride rows.
func (x *GraphContext) WriteSlice(a, b Tensor, dim int, from int64) Tensor {
	return x.intoSlice("set", a, b, dim, from, func(a, b *C.struct_ggml_tensor, off C.size_t) *C.struct_ggml_tensor {
		return C.ggml_set_inplace(x.c, a, b, C.size_t(a.nb[1]), C.size_t(a.nb[2]), C.size_t(a.nb[3]), off)
	})
}

// AddSlice adds b into a in place, like WriteSlice.
func (x *GraphContext) AddSlice(a, b Tensor, dim int, from int64) Tensor {
	return x.intoSlice("acc", a, b, dim, from, func(a, b *C.struct_ggml_tensor, off C.size_t) *C.struct_ggml_tensor {
		return C.ggml_acc_inplace(x.c, a, b, C.size_t(a.nb[1]), C.size_t(a.nb[2]), C.size_t(a.nb[3]), off)
	})
}

func (x *GraphContext) intoSlice(op string, a, b Tensor, dim int, from int64, apply func(a, b *C.struct_ggml_tensor, off C.size_t) *C.struct_ggml_tensor) Tensor {
	// ggml keeps the strides and the offset of these operations in 32-bit
	// integers (and asserts the offset is under 2^30).
	ok := dim >= 0 && dim <= 3 && from >= 0 && a.Type() == TypeF32 && b.Type() == TypeF32 && a.Contiguous() && b.rowsContiguous() &&
		from*a.Nb(dim) < 1<<30 && a.Nb(3) <= math.MaxInt32
	for d := range 4 {
		ok = ok && ((d == dim && from+b.Ne(d) <= a.Ne(d)) || (d != dim && a.Ne(d) == b.Ne(d)))
	}
	if !ok {
		opPanic(op, "%v into %v from index %d of dimension %d", b, a, from, dim)
	}
	x.reserve(op)
	return Tensor{apply(a.c, b.c, C.size_t(from*a.Nb(dim)))}
}

// Pad appends zeros to a: p[d] after the end of dimension d.
func (x *GraphContext) Pad(a Tensor, p [4]int64) Tensor {
	if a.Type() != TypeF32 || !a.rowsContiguous() || p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0 || slices.Max(p[:]) > math.MaxInt32 {
		opPanic("pad", "%v by %v", a, p)
	}
	x.reserve("pad")
	return Tensor{C.ggml_pad(x.c, a.c, C.int(p[0]), C.int(p[1]), C.int(p[2]), C.int(p[3]))}
}

// Reshape views the contiguous tensor a with another shape of the same
// size.
func (x *GraphContext) Reshape(a Tensor, shape ...int64) Tensor {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	if !a.Contiguous() || n != a.Elements() || len(shape) < 2 || len(shape) > 4 {
		opPanic("reshape", "cannot view %v as %v", a, shape)
	}
	x.reserve("reshape")
	switch len(shape) {
	case 2:
		return Tensor{C.ggml_reshape_2d(x.c, a.c, C.int64_t(shape[0]), C.int64_t(shape[1]))}
	case 3:
		return Tensor{C.ggml_reshape_3d(x.c, a.c, C.int64_t(shape[0]), C.int64_t(shape[1]), C.int64_t(shape[2]))}
	default:
		return Tensor{C.ggml_reshape_4d(x.c, a.c, C.int64_t(shape[0]), C.int64_t(shape[1]), C.int64_t(shape[2]), C.int64_t(shape[3]))}
	}
}

// Permute views a with its dimensions moved: dimension i of a becomes
// dimension axes[i] of the result.
func (x *GraphContext) Permute(a Tensor, axes ...int) Tensor {
	seen := [4]bool{}
	for _, ax := range axes {
		if ax < 0 || ax > 3 || seen[ax] {
			opPanic("permute", "axes %v are not a permutation of 0..3", axes)
		}
		seen[ax] = true
	}
	if len(axes) != 4 {
		opPanic("permute", "axes %v are not a permutation of 0..3", axes)
	}
	x.reserve("permute")
	return Tensor{C.ggml_permute(x.c, a.c, C.int(axes[0]), C.int(axes[1]), C.int(axes[2]), C.int(axes[3]))}
}

// Transpose views a with dimensions 0 and 1 swapped.
func (x *GraphContext) Transpose(a Tensor) Tensor {
	x.reserve("transpose")
	return Tensor{C.ggml_transpose(x.c, a.c)}
}

// T is the contiguous transpose of a: Cont(Transpose(a)).
func (x *GraphContext) T(a Tensor) Tensor { return x.Cont(x.Transpose(a)) }

// GetRows gathers rows of a [n, rows, k, l] by the I32 indices idx
// [m, k, l]: the result [n, m, k, l] (F32) holds, for each (k, l), the
// rows of a that idx lists. With a matrix and a vector it gathers rows of
// the matrix; with a [1, v, k] and idx [1, k] one element of each column.
func (x *GraphContext) GetRows(a, idx Tensor) Tensor {
	if idx.Type() != TypeI32 || a.Ne(2) != idx.Ne(1) || a.Ne(3) != idx.Ne(2) || idx.Ne(3) != 1 {
		opPanic("get_rows", "indices %v do not fit %v", idx, a)
	}
	x.reserve("get_rows")
	return Tensor{C.ggml_get_rows(x.c, a.c, idx.c)}
}

// ArgMax is the index (I32) of the largest element of each row of the
// matrix a.
func (x *GraphContext) ArgMax(a Tensor) Tensor {
	if a.Ne(2) != 1 || a.Ne(3) != 1 || a.Type() != TypeF32 {
		opPanic("argmax", "%v is not an F32 matrix", a)
	}
	x.reserve("argmax")
	return Tensor{C.ggml_argmax(x.c, a.c)}
}

// GetRowsBack scatters (adds) the rows of grad into a zero tensor of like's
// shape at the rows idx lists: the gradient of GetRows.
func (x *GraphContext) GetRowsBack(grad, idx, like Tensor) Tensor {
	if idx.Type() != TypeI32 || idx.Ne(1) != 1 || grad.Ne(2) != 1 || grad.Ne(3) != 1 || like.Ne(2) != 1 || like.Ne(3) != 1 ||
		grad.Ne(0) != like.Ne(0) || grad.Ne(1) != idx.Ne(0) || grad.Type() != TypeF32 {
		opPanic("get_rows_back", "gradient %v, indices %v and shape %v do not match", grad, idx, like)
	}
	x.reserve("get_rows_back")
	return Tensor{C.ggml_get_rows_back(x.c, grad.c, idx.c, like.c)}
}

// SetRows writes the rows of src (F32 [n, m]) over the rows of dst
// ([n, rows], F32) that the I32 indices idx [m] list, and returns dst so
// changed (a view: later reads of dst must go through the result). The
// indices must differ: two writes to one row leave either. Unlike
// GetRowsBack it touches only the rows it writes, and GPU backends run it
// at any number of rows.
func (x *GraphContext) SetRows(dst, src, idx Tensor) Tensor {
	if idx.Type() != TypeI32 || idx.Ne(1) != 1 || idx.Ne(2) != 1 || idx.Ne(3) != 1 || src.Type() != TypeF32 || dst.Type() != TypeF32 ||
		src.Ne(2) != 1 || src.Ne(3) != 1 || dst.Ne(2) != 1 || dst.Ne(3) != 1 ||
		src.Ne(0) != dst.Ne(0) || src.Ne(1) != idx.Ne(0) || !src.Contiguous() || !dst.Contiguous() {
		opPanic("set_rows", "rows %v, indices %v and destination %v do not match", src, idx, dst)
	}
	x.reserve("set_rows")
	return Tensor{C.ggml_set_rows(x.c, dst.c, src.c, idx.c)}
}

// SoftMaxExt is softmax(a*scale + mask) along rows; mask (F32, optional) is
// broadcast over dimensions 2 and 3 of a.
func (x *GraphContext) SoftMaxExt(a, mask Tensor, scale float32) Tensor {
	if !a.Contiguous() || a.Type() != TypeF32 {
		opPanic("soft_max_ext", "%v must be contiguous F32", a)
	}
	var m *C.struct_ggml_tensor
	if mask.Valid() {
		if !mask.Contiguous() || mask.Type() != TypeF32 || mask.Ne(0) != a.Ne(0) || mask.Ne(1) < a.Ne(1) ||
			a.Ne(2)%mask.Ne(2) != 0 || a.Ne(3)%mask.Ne(3) != 0 {
			opPanic("soft_max_ext", "mask %v does not fit %v", mask, a)
		}
		m = mask.c
	}
	x.reserve("soft_max_ext")
	return Tensor{C.ggml_soft_max_ext(x.c, a.c, m, C.float(scale), 0)}
}

// SoftMaxExtBack is the gradient of SoftMaxExt with respect to a, given the
// gradient grad of its output out.
func (x *GraphContext) SoftMaxExtBack(grad, out Tensor, scale float32) Tensor {
	if !sameShape(grad, out) || !grad.Contiguous() || !out.Contiguous() {
		opPanic("soft_max_ext_back", "gradient %v and output %v must be contiguous and of one shape", grad, out)
	}
	x.reserve("soft_max_ext_back")
	return Tensor{C.ggml_soft_max_ext_back(x.c, grad.c, out.c, C.float(scale), 0)}
}

// Rope are the parameters of a rotary position embedding, as llama.cpp
// passes them to ggml_rope_ext.
type Rope struct {
	Dims       int // rotated dimensions of each head
	Mode       int // RopeNormal or RopeNeoX
	NCtxOrig   int // original training context (YaRN)
	FreqBase   float32
	FreqScale  float32
	ExtFactor  float32
	AttnFactor float32
	BetaFast   float32
	BetaSlow   float32
	// Factors (F32, optional) divide the frequency of each rotated pair.
	Factors Tensor
}

func (r Rope) check(op string, a, pos Tensor) {
	switch {
	case pos.Type() != TypeI32 || pos.Ne(1) != 1 || pos.Ne(0) != a.Ne(2) || a.Ne(3) != 1:
		opPanic(op, "positions %v do not fit %v (want I32 [%d])", pos, a, a.Ne(2))
	case r.Dims <= 0 || int64(r.Dims) > a.Ne(0) || r.Dims%2 != 0:
		opPanic(op, "%d rotated dimensions for heads of %d", r.Dims, a.Ne(0))
	case r.Mode != RopeNormal && r.Mode != RopeNeoX:
		opPanic(op, "mode %d", r.Mode)
	case r.Factors.Valid() && (r.Factors.Type() != TypeF32 || r.Factors.Ne(0) < int64(r.Dims/2)):
		opPanic(op, "frequency factors %v for %d dimensions", r.Factors, r.Dims)
	case a.Type() != TypeF32:
		opPanic(op, "%v must be F32", a)
	}
}

func (r Rope) factors() *C.struct_ggml_tensor {
	if r.Factors.Valid() {
		return r.Factors.c
	}
	return nil
}

// RopeExt rotates the heads of a [head, heads, tokens] by the positions
// pos (I32 [tokens]).
func (x *GraphContext) RopeExt(a, pos Tensor, r Rope) Tensor {
	r.check("rope_ext", a, pos)
	x.reserve("rope_ext")
	return Tensor{C.ggml_rope_ext(x.c, a.c, pos.c, r.factors(), C.int(r.Dims), C.int(r.Mode), C.int(r.NCtxOrig),
		C.float(r.FreqBase), C.float(r.FreqScale), C.float(r.ExtFactor), C.float(r.AttnFactor), C.float(r.BetaFast), C.float(r.BetaSlow))}
}

// RopeExtBack is the gradient of RopeExt (the inverse rotation) applied to
// grad.
func (x *GraphContext) RopeExtBack(grad, pos Tensor, r Rope) Tensor {
	r.check("rope_ext_back", grad, pos)
	x.reserve("rope_ext_back")
	return Tensor{C.ggml_rope_ext_back(x.c, grad.c, pos.c, r.factors(), C.int(r.Dims), C.int(r.Mode), C.int(r.NCtxOrig),
		C.float(r.FreqBase), C.float(r.FreqScale), C.float(r.ExtFactor), C.float(r.AttnFactor), C.float(r.BetaFast), C.float(r.BetaSlow))}
}

// Graph is a list of operations in an order that computes each after its
// inputs.
type Graph struct {
	c    *C.struct_ggml_cgraph
	size int
}

// NewGraph makes an empty graph of up to size nodes in the context, which
// NewGraphContext must have been given room for.
func (x *GraphContext) NewGraph(size int) *Graph {
	for i, n := range x.graphs {
		if n == size {
			x.graphs = append(x.graphs[:i], x.graphs[i+1:]...)
			return &Graph{c: C.ggml_new_graph_custom(x.c, C.size_t(size), false), size: size}
		}
	}
	opPanic("new_graph", "the context has no room for a graph of %d nodes", size)
	return nil
}

// Expand adds t and every operation it depends on that the graph lacks.
// ggml aborts when nodes or leaves overflow the graph, so its size must be
// at least the number of tensors the expansion can reach: those of the
// graph's context plus the leaves of other contexts (weights) it uses.
func (g *Graph) Expand(t Tensor) {
	if g.Len() >= g.size {
		opPanic("build_forward_expand", "the graph is full (%d nodes)", g.size)
	}
	C.ggml_build_forward_expand(g.c, t.c)
}

// AddNode appends one node, whose inputs the caller computes earlier.
func (g *Graph) AddNode(t Tensor) {
	if g.Len() >= g.size {
		opPanic("graph_add_node", "the graph is full (%d nodes)", g.size)
	}
	C.ggml_graph_add_node(g.c, t.c)
}

// Len is the number of nodes.
func (g *Graph) Len() int { return int(C.ggml_graph_n_nodes(g.c)) }

// Node is the i-th node.
func (g *Graph) Node(i int) Tensor { return Tensor{C.ggml_graph_node(g.c, C.int(i))} }
