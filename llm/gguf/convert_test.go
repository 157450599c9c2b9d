package gguf

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFloat32ToF16(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{65504, 0x7bff},                  // largest half
		{65520, 0x7c00},                  // rounds up to infinity
		{1e6, 0x7c00},                    // overflow
		{float32(math.Inf(-1)), 0xfc00},  // infinity stays infinity
		{6.103515625e-05, 0x0400},        // smallest normal
		{5.960464477539063e-08, 0x0001},  // smallest subnormal
		{2.9802322387695312e-08, 0x0000}, // half of it: tie to even (zero)
		{4.470348358154297e-08, 0x0001},  // 0.75 of it rounds up
		{1 + 1.0/2048, 0x3c00},           // tie between 1 and next: to even
		{1 + 3.0/2048, 0x3c02},           // tie: to even (up)
		{0.1, 0x2e66},
	}
	for _, c := range cases {
		if got := Float32ToF16(c.in); got != c.want {
			t.Errorf("Float32ToF16(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	if h := Float32ToF16(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("NaN became %#04x", h)
	}
}

// Every half value converts to float32 and back unchanged.
func TestF16RoundTripAllValues(t *testing.T) {
	for h := range 1 << 16 {
		f := F16ToFloat32(uint16(h))
		if math.IsNaN(float64(f)) {
			continue
		}
		if back := Float32ToF16(f); back != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, back)
		}
	}
}

// Float32ToF16 picks the nearest half for random values.
func TestF16IsNearest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		f := float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(10)-7)))
		h := Float32ToF16(f)
		got := float64(F16ToFloat32(h))
		for _, n := range []uint16{h - 1, h + 1} {
			other := float64(F16ToFloat32(n))
			if math.Signbit(other) != math.Signbit(got) || math.IsInf(other, 0) {
				continue
			}
			if math.Abs(other-float64(f)) < math.Abs(got-float64(f)) {
				t.Fatalf("%g -> %g, but %g is nearer", f, got, other)
			}
		}
	}
}

func TestBF16(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie: to even (down)
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie: to even (up)
		{math.Float32frombits(0x3f808001), 0x3f81}, // above the tie
		{float32(math.Inf(1)), 0x7f80},
	}
	for _, c := range cases {
		if got := Float32ToBF16(c.in); got != c.want {
			t.Errorf("Float32ToBF16(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
		if c.in == BF16ToFloat32(c.want) && BF16ToFloat32(Float32ToBF16(c.in)) != c.in {
			t.Errorf("%g does not round-trip", c.in)
		}
	}
	if h := Float32ToBF16(float32(math.NaN())); !math.IsNaN(float64(BF16ToFloat32(h))) {
		t.Errorf("NaN became %#04x", h)
	}
}

func TestEncodeDecodeFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	values := make([]float32, 96)
	for i := range values {
		values[i] = float32(r.NormFloat64())
	}
	values[5] = 0
	tolerance := map[TensorType]float64{TensorF32: 0, TensorF16: 1e-3, TensorBF16: 8e-3, TensorQ8_0: 0.02}
	for typ, tol := range tolerance {
		raw, err := EncodeFloat32(typ, values)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := tensorBytes(typ, []int64{int64(len(values))}); int64(len(raw)) != want {
			t.Fatalf("%s: %d bytes, want %d", typ, len(raw), want)
		}
		back, err := DecodeFloat32(typ, raw)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range values {
			if diff := math.Abs(float64(back[i] - v)); diff > tol*math.Max(1, math.Abs(float64(v))) {
				t.Errorf("%s: value %d: %g became %g", typ, i, v, back[i])
			}
		}
	}
	if _, err := EncodeFloat32(TensorQ8_0, values[:40]); err == nil {
		t.Error("q8_0 accepted 40 values")
	}
	if _, err := EncodeFloat32(TensorQ4_0, values); err == nil {
		t.Error("q4_0 encoding accepted")
	}
	if _, err := DecodeFloat32(TensorF16, make([]byte, 3)); err == nil {
		t.Error("odd f16 byte count accepted")
	}
}

// A Q8_0 block stores the scale max|x|/127 as f16, then x/scale rounded.
func TestQ8BlockLayout(t *testing.T) {
	values := make([]float32, 32)
	values[0] = 127
	values[1] = -63.5 // rounds away from zero, like roundf
	values[2] = 1.4
	raw, err := EncodeFloat32(TensorQ8_0, values)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 34 || raw[0] != 0x00 || raw[1] != 0x3c { // scale 1.0
		t.Fatalf("block header % x", raw[:2])
	}
	if int8(raw[2]) != 127 || int8(raw[3]) != -64 || int8(raw[4]) != 1 || raw[5] != 0 {
		t.Fatalf("quants % x", raw[2:6])
	}
}

// Q4_K keeps 4 bits per value: the error of normal values stays within
// about half a quantisation step of their sub-block's range, zeros and
// the sub-block extremes come back nearly exact.
func TestQ4KRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	values := make([]float32, 2*q4kBlock)
	for i := range values {
		values[i] = float32(r.NormFloat64())
	}
	copy(values[q4kBlock:], make([]float32, q4kSubBlock)) // a sub-block of zeros
	for i := q4kBlock + q4kSubBlock; i < q4kBlock+2*q4kSubBlock; i++ {
		values[i] = 0.25 // and one constant, positive one
	}
	raw, err := EncodeFloat32(TensorQ4_K, values)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 2*144 {
		t.Fatalf("%d bytes for two q4_K blocks", len(raw))
	}
	back, err := DecodeFloat32(TensorQ4_K, raw)
	if err != nil {
		t.Fatal(err)
	}
	var sq float64
	for i, v := range values {
		d := math.Abs(float64(back[i] - v))
		sq += d * d
		if d > 0.3 {
			t.Errorf("value %d: %g became %g", i, v, back[i])
		}
	}
	if rms := math.Sqrt(sq / float64(len(values))); rms > 0.1 || rms == 0 {
		t.Errorf("rms error %g", rms)
	}
	for i := q4kBlock; i < q4kBlock+q4kSubBlock; i++ {
		if math.Abs(float64(back[i])) > 1e-2 {
			t.Fatalf("zero %d became %g", i, back[i])
		}
	}
	for i := q4kBlock + q4kSubBlock; i < q4kBlock+2*q4kSubBlock; i++ {
		if math.Abs(float64(back[i])-0.25) > 0.05 { // 6-bit scales: a small range is coarse
			t.Fatalf("0.25 became %g", back[i])
		}
	}
	if _, err := EncodeFloat32(TensorQ4_K, values[:100]); err == nil {
		t.Error("q4_K accepted 100 values")
	}
	if _, err := DecodeFloat32(TensorQ4_K, raw[:100]); err == nil {
		t.Error("q4_K decoded a partial block")
	}
}
