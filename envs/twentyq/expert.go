package twentyq

import (
	"math"
	"math/bits"
)

// expertQuestion returns the canonical question whose answer splits the
// candidates most evenly (the highest entropy over Yes / No / I don't know),
// or a guess once at most two candidates remain. Ties go to the earlier
// proposition, so the expert is deterministic.
func (k *knowledgeBase) expertQuestion(candidates bitset) string {
	n := candidates.count()
	if n <= 2 {
		return k.objects[candidates.first()].guessText()
	}
	if n == len(k.objects) && k.openingQuestion != "" {
		return k.openingQuestion
	}
	// Late in a game few words of the bitset are non-zero; count over
	// those only.
	var wordsBuf [64]int
	words := wordsBuf[:0]
	for i, w := range candidates {
		if w != 0 {
			words = append(words, i)
		}
	}
	best, bestSpread := -1, 0.0
	for p := range k.props {
		yesCount, unknownCount := 0, 0
		yesSet, unknownSet := k.yesSet[p], k.unknown[p]
		for _, i := range words {
			yesCount += bits.OnesCount64(candidates[i] & yesSet[i])
			unknownCount += bits.OnesCount64(candidates[i] & unknownSet[i])
		}
		// n*entropy = n log n - sum c log c: maximising the entropy is
		// minimising the sum.
		spread := k.xlogx[n] - k.xlogx[yesCount] - k.xlogx[unknownCount] - k.xlogx[n-yesCount-unknownCount]
		if spread > bestSpread+1e-9 {
			best, bestSpread = p, spread
		}
	}
	if best < 0 {
		// No proposition tells the remaining candidates apart.
		return k.objects[candidates.first()].guessText()
	}
	return k.props[best].question
}

// xlogxTable returns c*log(c) for c = 0..n.
func xlogxTable(n int) []float64 {
	t := make([]float64, n+1)
	for c := 2; c <= n; c++ {
		t[c] = float64(c) * math.Log(float64(c))
	}
	return t
}
