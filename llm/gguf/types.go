package gguf

import (
	"fmt"
	"math"
)

// ValueType is the type tag of a metadata value (enum gguf_type).
type ValueType uint32

// Metadata value types, numbered as in the file format.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"}

func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("gguf_type(%d)", uint32(t))
}

// fixedSize is the encoded size of a scalar of type t, 0 for strings,
// arrays and unknown types.
func (t ValueType) fixedSize() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// TypeOf reports the GGUF type of a metadata value and, for arrays, the
// element type. ok is false when v is not one of the Go types a metadata
// value may have (see KV).
func TypeOf(v any) (typ, elem ValueType, ok bool) {
	switch v.(type) {
	case uint8:
		return TypeUint8, 0, true
	case int8:
		return TypeInt8, 0, true
	case uint16:
		return TypeUint16, 0, true
	case int16:
		return TypeInt16, 0, true
	case uint32:
		return TypeUint32, 0, true
	case int32:
		return TypeInt32, 0, true
	case float32:
		return TypeFloat32, 0, true
	case bool:
		return TypeBool, 0, true
	case string:
		return TypeString, 0, true
	case uint64:
		return TypeUint64, 0, true
	case int64:
		return TypeInt64, 0, true
	case float64:
		return TypeFloat64, 0, true
	case []uint8:
		return TypeArray, TypeUint8, true
	case []int8:
		return TypeArray, TypeInt8, true
	case []uint16:
		return TypeArray, TypeUint16, true
	case []int16:
		return TypeArray, TypeInt16, true
	case []uint32:
		return TypeArray, TypeUint32, true
	case []int32:
		return TypeArray, TypeInt32, true
	case []float32:
		return TypeArray, TypeFloat32, true
	case []bool:
		return TypeArray, TypeBool, true
	case []string:
		return TypeArray, TypeString, true
	case []uint64:
		return TypeArray, TypeUint64, true
	case []int64:
		return TypeArray, TypeInt64, true
	case []float64:
		return TypeArray, TypeFloat64, true
	}
	return 0, 0, false
}

// typeName describes a value's type the way errors print it: "u32" or "arr[str]".
func typeName(v any) string {
	typ, elem, ok := TypeOf(v)
	switch {
	case !ok:
		return fmt.Sprintf("unsupported Go type %T", v)
	case typ == TypeArray:
		return "arr[" + elem.String() + "]"
	}
	return typ.String()
}

// TensorType is a ggml tensor element type (enum ggml_type).
type TensorType uint32

// Tensor types, numbered as in ggml. Numbers missing here were removed from
// ggml and are rejected.
const (
	TensorF32     TensorType = 0
	TensorF16     TensorType = 1
	TensorQ4_0    TensorType = 2
	TensorQ4_1    TensorType = 3
	TensorQ5_0    TensorType = 6
	TensorQ5_1    TensorType = 7
	TensorQ8_0    TensorType = 8
	TensorQ8_1    TensorType = 9
	TensorQ2_K    TensorType = 10
	TensorQ3_K    TensorType = 11
	TensorQ4_K    TensorType = 12
	TensorQ5_K    TensorType = 13
	TensorQ6_K    TensorType = 14
	TensorQ8_K    TensorType = 15
	TensorIQ2_XXS TensorType = 16
	TensorIQ2_XS  TensorType = 17
	TensorIQ3_XXS TensorType = 18
	TensorIQ1_S   TensorType = 19
	TensorIQ4_NL  TensorType = 20
	TensorIQ3_S   TensorType = 21
	TensorIQ2_S   TensorType = 22
	TensorIQ4_XS  TensorType = 23
	TensorI8      TensorType = 24
	TensorI16     TensorType = 25
	TensorI32     TensorType = 26
	TensorI64     TensorType = 27
	TensorF64     TensorType = 28
	TensorIQ1_M   TensorType = 29
	TensorBF16    TensorType = 30
	TensorTQ1_0   TensorType = 34
	TensorTQ2_0   TensorType = 35
	TensorMXFP4   TensorType = 39
)

// tensorTypeInfo is the block layout of a tensor type: blockSize elements
// are stored in typeSize bytes.
type tensorTypeInfo struct {
	name      string
	blockSize int64
	typeSize  int64
}

// The block sizes mirror ggml's type traits (ggml-common.h); the K-quants
// use super-blocks of 256 elements.
var tensorTypes = map[TensorType]tensorTypeInfo{
	TensorF32:     {"f32", 1, 4},
	TensorF16:     {"f16", 1, 2},
	TensorQ4_0:    {"q4_0", 32, 18},
	TensorQ4_1:    {"q4_1", 32, 20},
	TensorQ5_0:    {"q5_0", 32, 22},
	TensorQ5_1:    {"q5_1", 32, 24},
	TensorQ8_0:    {"q8_0", 32, 34},
	TensorQ8_1:    {"q8_1", 32, 36},
	TensorQ2_K:    {"q2_K", 256, 84},
	TensorQ3_K:    {"q3_K", 256, 110},
	TensorQ4_K:    {"q4_K", 256, 144},
	TensorQ5_K:    {"q5_K", 256, 176},
	TensorQ6_K:    {"q6_K", 256, 210},
	TensorQ8_K:    {"q8_K", 256, 292},
	TensorIQ2_XXS: {"iq2_xxs", 256, 66},
	TensorIQ2_XS:  {"iq2_xs", 256, 74},
	TensorIQ3_XXS: {"iq3_xxs", 256, 98},
	TensorIQ1_S:   {"iq1_s", 256, 50},
	TensorIQ4_NL:  {"iq4_nl", 32, 18},
	TensorIQ3_S:   {"iq3_s", 256, 110},
	TensorIQ2_S:   {"iq2_s", 256, 82},
	TensorIQ4_XS:  {"iq4_xs", 256, 136},
	TensorI8:      {"i8", 1, 1},
	TensorI16:     {"i16", 1, 2},
	TensorI32:     {"i32", 1, 4},
	TensorI64:     {"i64", 1, 8},
	TensorF64:     {"f64", 1, 8},
	TensorIQ1_M:   {"iq1_m", 256, 56},
	TensorBF16:    {"bf16", 1, 2},
	TensorTQ1_0:   {"tq1_0", 256, 54},
	TensorTQ2_0:   {"tq2_0", 256, 66},
	TensorMXFP4:   {"mxfp4", 32, 17},
}

func (t TensorType) String() string {
	if info, ok := tensorTypes[t]; ok {
		return info.name
	}
	return fmt.Sprintf("ggml_type(%d)", uint32(t))
}

// BlockSize is the number of elements in one block of t (1 for plain types).
func (t TensorType) BlockSize() int64 { return tensorTypes[t].blockSize }

// BlockBytes is the number of bytes one block of t takes.
func (t TensorType) BlockBytes() int64 { return tensorTypes[t].typeSize }

// MaxDims is the largest number of dimensions a ggml tensor has.
const MaxDims = 4

// MaxTensorName is the longest tensor name ggml accepts, in bytes
// (GGML_MAX_NAME minus the terminating NUL).
const MaxTensorName = 63

// tensorBytes checks a tensor's shape against its type and returns its size
// in bytes, rejecting shapes whose size does not fit in an int64.
func tensorBytes(typ TensorType, shape []int64) (int64, error) {
	info, ok := tensorTypes[typ]
	if !ok {
		return 0, fmt.Errorf("unknown tensor type %d", uint32(typ))
	}
	if len(shape) > MaxDims {
		return 0, fmt.Errorf("%d dimensions, at most %d allowed", len(shape), MaxDims)
	}
	elements := int64(1)
	for i, n := range shape {
		// ggml divides by the dimensions when it checks a shape, so a zero
		// dimension would crash it.
		if n <= 0 {
			return 0, fmt.Errorf("dimension %d is %d, must be positive", i, n)
		}
		if elements > math.MaxInt64/n {
			return 0, fmt.Errorf("shape %v has too many elements", shape)
		}
		elements *= n
	}
	rowLen := int64(1)
	if len(shape) > 0 {
		rowLen = shape[0]
	}
	if rowLen%info.blockSize != 0 {
		return 0, fmt.Errorf("row length %d is not a multiple of the %s block size %d", rowLen, info.name, info.blockSize)
	}
	blocks := elements / info.blockSize
	if blocks > math.MaxInt64/info.typeSize {
		return 0, fmt.Errorf("shape %v is too large for type %s", shape, info.name)
	}
	return blocks * info.typeSize, nil
}

// DefaultAlignment is the alignment of the tensor data when the file does not
// set general.alignment.
const DefaultAlignment = 32

// KeyAlignment is the metadata key that sets the tensor data alignment.
const KeyAlignment = "general.alignment"

func padTo(n, alignment int64) int64 {
	return (n + alignment - 1) / alignment * alignment
}
