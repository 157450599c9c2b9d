package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// q8Block is the number of values in one Q8_0 block.
const q8Block = 32

// EncodeFloat32 converts values to the bytes of a tensor of type typ: F32,
// F16, BF16, Q8_0 or Q4_K. Conversions round to nearest, ties to even, like
// ggml; Q8_0 quantises each block of 32 values as ggml's reference
// quantiser does, so len(values) must be a multiple of 32 for it, and Q4_K
// each block of 256 (see quantizeQ4KBlock).
func EncodeFloat32(typ TensorType, values []float32) ([]byte, error) {
	le := binary.LittleEndian
	switch typ {
	case TensorF32:
		out := make([]byte, 4*len(values))
		for i, v := range values {
			le.PutUint32(out[4*i:], math.Float32bits(v))
		}
		return out, nil
	case TensorF16:
		out := make([]byte, 2*len(values))
		for i, v := range values {
			le.PutUint16(out[2*i:], Float32ToF16(v))
		}
		return out, nil
	case TensorBF16:
		out := make([]byte, 2*len(values))
		for i, v := range values {
			le.PutUint16(out[2*i:], Float32ToBF16(v))
		}
		return out, nil
	case TensorQ8_0:
		return encodeBlocks(typ, values, quantizeQ8Block)
	case TensorQ4_K:
		return encodeBlocks(typ, values, quantizeQ4KBlock)
	}
	return nil, fmt.Errorf("cannot encode float32 values as %s", typ)
}

// encodeBlocks quantises values block by block into a tensor of type typ.
func encodeBlocks(typ TensorType, values []float32, quantize func(dst []byte, x []float32)) ([]byte, error) {
	size := int(typ.BlockSize())
	if len(values)%size != 0 {
		return nil, fmt.Errorf("%s needs a multiple of %d values, got %d", typ, size, len(values))
	}
	blockBytes := typ.BlockBytes()
	out := make([]byte, int64(len(values)/size)*blockBytes)
	for b := 0; b < len(values)/size; b++ {
		quantize(out[int64(b)*blockBytes:], values[b*size:(b+1)*size])
	}
	return out, nil
}

func quantizeQ8Block(dst []byte, x []float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(dst, Float32ToF16(d))
	for j, v := range x {
		dst[2+j] = byte(int8(math.Round(float64(v * id))))
	}
}

// DecodeFloat32 converts the bytes of a tensor of type typ (F32, F16, BF16,
// Q8_0 or Q4_K) to float32 values.
func DecodeFloat32(typ TensorType, raw []byte) ([]float32, error) {
	le := binary.LittleEndian
	switch typ {
	case TensorF32, TensorF16, TensorBF16:
		size := int(typ.BlockBytes())
		if len(raw)%size != 0 {
			return nil, fmt.Errorf("%d bytes is not a whole number of %s values", len(raw), typ)
		}
		out := make([]float32, len(raw)/size)
		for i := range out {
			switch typ {
			case TensorF32:
				out[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
			case TensorF16:
				out[i] = F16ToFloat32(le.Uint16(raw[2*i:]))
			default:
				out[i] = BF16ToFloat32(le.Uint16(raw[2*i:]))
			}
		}
		return out, nil
	case TensorQ8_0:
		return decodeBlocks(typ, raw, dequantizeQ8Block)
	case TensorQ4_K:
		return decodeBlocks(typ, raw, dequantizeQ4KBlock)
	}
	return nil, fmt.Errorf("cannot decode %s tensors to float32", typ)
}

// decodeBlocks dequantises a tensor of type typ block by block.
func decodeBlocks(typ TensorType, raw []byte, dequantize func(dst []float32, block []byte)) ([]float32, error) {
	blockBytes, size := int(typ.BlockBytes()), int(typ.BlockSize())
	if len(raw)%blockBytes != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %s blocks", len(raw), typ)
	}
	out := make([]float32, len(raw)/blockBytes*size)
	for b := 0; b < len(raw)/blockBytes; b++ {
		dequantize(out[b*size:], raw[b*blockBytes:])
	}
	return out, nil
}

func dequantizeQ8Block(dst []float32, block []byte) {
	d := F16ToFloat32(binary.LittleEndian.Uint16(block))
	for j := range q8Block {
		dst[j] = d * float32(int8(block[2+j]))
	}
}

// Float32ToF16 converts f to IEEE half precision, rounding to nearest with
// ties to even; values too large become infinities and NaNs stay NaNs.
func Float32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half: shift the full significand right; anything
		// below half the smallest subnormal rounds to zero.
		if e < -10 {
			return sign
		}
		full := mant | 0x800000
		shift := uint32(14 - e)
		return sign | uint16(roundShift(full, shift))
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is correct, up to infinity
	}
	return sign | uint16(h)
}

// roundShift returns v >> shift rounded to nearest, ties to even.
func roundShift(v, shift uint32) uint32 {
	r := v >> shift
	rem := v & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || (rem == half && r&1 == 1) {
		r++
	}
	return r
}

// F16ToFloat32 converts an IEEE half-precision value to float32 exactly.
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: normalise the significand.
	e := uint32(127 - 15 + 1)
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
}

// Float32ToBF16 converts f to bfloat16 the way ggml does: round to nearest,
// ties to even, NaNs made quiet.
func Float32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// BF16ToFloat32 converts a bfloat16 value to float32 exactly.
func BF16ToFloat32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}
