package llm

import "math"

// exp32 is e^x in float32 within 3e-7 relative error (about two float32 ulps), several times
// faster than math.Exp: sampling and log-probabilities exponentiate the
// whole vocabulary for every generated token, which would otherwise be a
// large share of the engine's time outside llama_decode on small models.
func exp32(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2Hi = 0.693359375
		ln2Lo = -2.12194440e-4
	)
	if x < -87.3 {
		return 0
	}
	if x > 88.7 {
		return float32(math.Inf(1))
	}
	// Adding and subtracting 1.5*2^23 rounds to the nearest integer.
	const round = 12582912
	k := (x*log2e + round) - round
	r := x - k*ln2Hi - k*ln2Lo
	// Taylor series of e^r on |r| <= ln2/2.
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return p * math.Float32frombits(uint32(int32(k)+127)<<23)
}
