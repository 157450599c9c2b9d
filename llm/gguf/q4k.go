package gguf

import (
	"encoding/binary"
	"math"
)

// Q4_K stores values in super-blocks of 256: an F16 scale d and an F16
// scale of minimums dmin, eight 6-bit sub-block scales and minimums packed
// into 12 bytes, and a 4-bit quant per value; value i of sub-block j is
// d*scale[j]*q[i] - dmin*min[j]. The layout is ggml's block_q4_K.
const (
	q4kBlock     = 256
	q4kSubBlock  = 32
	q4kScaleSize = 12
)

// quantizeQ4KBlock encodes 256 values into one Q4_K super-block (144
// bytes). Each sub-block's range [min(x, 0), max(x)] is mapped onto 0-15;
// the scales and minimums are then quantised to 6 bits against the
// super-block's largest. It is a plain round-to-nearest quantiser, not
// ggml's search for the best scales, and reads back exactly as ggml
// decodes Q4_K.
func quantizeQ4KBlock(dst []byte, x []float32) {
	var scales, mins [q4kBlock / q4kSubBlock]float32
	var maxScale, maxMin float32
	for j := range scales {
		lo, hi := float32(0), float32(0)
		for _, v := range x[j*q4kSubBlock : (j+1)*q4kSubBlock] {
			lo, hi = min(lo, v), max(hi, v)
		}
		scales[j], mins[j] = (hi-lo)/15, -lo
		maxScale, maxMin = max(maxScale, scales[j]), max(maxMin, mins[j])
	}
	d, dmin := F16ToFloat32(Float32ToF16(maxScale/63)), F16ToFloat32(Float32ToF16(maxMin/63))
	var ls, lm [8]uint8
	for j := range scales {
		if d > 0 {
			ls[j] = uint8(min(63, math.Round(float64(scales[j]/d))))
		}
		if dmin > 0 {
			lm[j] = uint8(min(63, math.Round(float64(mins[j]/dmin))))
		}
	}
	binary.LittleEndian.PutUint16(dst[0:], Float32ToF16(d))
	binary.LittleEndian.PutUint16(dst[2:], Float32ToF16(dmin))
	packed := dst[4 : 4+q4kScaleSize]
	clear(packed)
	for j := range 4 {
		packed[j] = ls[j]
		packed[j+4] = lm[j]
	}
	for j := 4; j < 8; j++ {
		packed[j+4] = ls[j]&0xF | lm[j]&0xF<<4
		packed[j-4] |= ls[j] >> 4 << 6
		packed[j] |= lm[j] >> 4 << 6
	}
	qs := dst[4+q4kScaleSize:]
	quant := func(j int, v float32) uint8 {
		step := d * float32(ls[j])
		if step == 0 {
			return 0
		}
		return uint8(max(0, min(15, math.Round(float64((v+dmin*float32(lm[j]))/step)))))
	}
	for j := 0; j < q4kBlock; j += 64 {
		for l := range q4kSubBlock {
			lo := quant(j/q4kSubBlock, x[j+l])
			hi := quant(j/q4kSubBlock+1, x[j+q4kSubBlock+l])
			qs[j/2+l] = lo | hi<<4
		}
	}
}

// q4kScaleMin unpacks sub-block j's 6-bit scale and minimum.
func q4kScaleMin(j int, packed []byte) (scale, min uint8) {
	if j < 4 {
		return packed[j] & 63, packed[j+4] & 63
	}
	return packed[j+4]&0xF | packed[j-4]>>6<<4, packed[j+4]>>4 | packed[j]>>6<<4
}

// dequantizeQ4KBlock decodes one super-block into 256 values.
func dequantizeQ4KBlock(dst []float32, block []byte) {
	d := F16ToFloat32(binary.LittleEndian.Uint16(block[0:]))
	dmin := F16ToFloat32(binary.LittleEndian.Uint16(block[2:]))
	packed := block[4 : 4+q4kScaleSize]
	qs := block[4+q4kScaleSize:]
	for j := 0; j < q4kBlock; j += 64 {
		sc, m := q4kScaleMin(j/q4kSubBlock, packed)
		d1, m1 := d*float32(sc), dmin*float32(m)
		sc, m = q4kScaleMin(j/q4kSubBlock+1, packed)
		d2, m2 := d*float32(sc), dmin*float32(m)
		q := qs[j/2 : j/2+q4kSubBlock]
		for l := range q4kSubBlock {
			dst[j+l] = d1*float32(q[l]&0xF) - m1
			dst[j+q4kSubBlock+l] = d2*float32(q[l]>>4) - m2
		}
	}
}
