package llm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/agentrl/agentrl/cgo"
)

// Sampling configures how tokens are drawn.
type Sampling struct {
	// Temperature divides the logits; 0 is greedy (argmax).
	Temperature float32 `json:"temperature"`
	// TopK keeps the K most likely tokens; 0 keeps all.
	TopK int `json:"top_k"`
	// TopP keeps the smallest set of tokens whose probability reaches P; 1
	// keeps all.
	TopP float32 `json:"top_p"`
	// MinP drops tokens less likely than MinP times the most likely one; 0
	// keeps all.
	MinP float32 `json:"min_p"`
	// Seed makes sampling reproducible: the same seed, prompt and settings
	// give the same completions however requests are batched. Negative
	// draws a random seed.
	Seed int64 `json:"seed"`
	// MaxTokens bounds each completion (default 256).
	MaxTokens int `json:"max_tokens"`
	// Stop ends a completion at the first of these strings to appear (the
	// earliest in the text where one token completes two); the string is
	// cut from the text but the tokens that produced it are kept.
	Stop []string `json:"stop,omitempty"`
	// IgnoreEOS keeps generating past end-of-generation tokens, for
	// benchmarks that need completions of a fixed length.
	IgnoreEOS bool `json:"ignore_eos,omitempty"`
}

// MinTemperature is the lowest temperature above 0 that sampling takes.
const MinTemperature = 1e-3

// DefaultSampling is plain sampling from the model's distribution.
func DefaultSampling() Sampling {
	return Sampling{Temperature: 1, TopP: 1, Seed: -1, MaxTokens: 256}
}

func (s Sampling) validate() error {
	switch {
	case s.Temperature < 0 || math.IsNaN(float64(s.Temperature)) || math.IsInf(float64(s.Temperature), 0):
		return fmt.Errorf("temperature %v must be a number >= 0", s.Temperature)
	case s.Temperature > 0 && s.Temperature < MinTemperature:
		// Its inverse overflows, and the best token's probability becomes
		// 0 x Inf.
		return fmt.Errorf("temperature %v: below %v use 0, greedy decoding", s.Temperature, MinTemperature)
	case s.TopK < 0:
		return fmt.Errorf("top-k %d must be >= 0", s.TopK)
	case !(s.TopP > 0 && s.TopP <= 1):
		return fmt.Errorf("top-p %v must be in (0, 1]", s.TopP)
	case !(s.MinP >= 0 && s.MinP < 1):
		return fmt.Errorf("min-p %v must be in [0, 1)", s.MinP)
	case s.MaxTokens <= 0:
		return fmt.Errorf("max tokens %d must be > 0", s.MaxTokens)
	}
	for _, stop := range s.Stop {
		if stop == "" {
			return fmt.Errorf("empty stop string")
		}
	}
	return nil
}

// sampler draws tokens for one sequence. Its scratch buffers are reused
// across steps so that sampling allocates nothing per token.
type sampler struct {
	cfg   Sampling
	rng   *rand.Rand
	probs []float32
	cand  []int32
}

// newSampler seeds one sequence's generator from the request seed and the
// sample index only, so that a prompt's completions do not depend on what
// else shares the batch.
// streamStride spreads a request's stream (GenerateRequest.Stream) over
// seeds; stream 0 keeps the call's seed.
const streamStride = 0xD1B54A32D192ED03

func newSampler(cfg Sampling, seed uint64, sample int) *sampler {
	return &sampler{cfg: cfg, rng: rand.New(rand.NewPCG(seed, uint64(sample)*0x9E3779B97F4A7C15+1))}
}

// logSoftmaxAt is log p(token) under the raw logits (temperature 1, no
// filtering): the quantity Score reports and the trainer computes.
func logSoftmaxAt(logits []float32, token int32) float32 {
	maxv := cgo.Max(logits)
	return logits[token] - maxv - float32(math.Log(cgo.SumExp(logits, maxv)))
}

func argmax(logits []float32) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int32(best)
}

// sample draws the next token from logits and returns it with its
// log-probability under the raw distribution (see logSoftmaxAt). At
// temperature 1 one pass of exponentials serves both. Logits that are not
// finite (a broken model or adapter) leave no token to draw: -1.
func (s *sampler) sample(logits []float32) (int32, float32) {
	maxv := cgo.Max(logits)
	if s.cfg.Temperature == 0 {
		tok := argmax(logits)
		lp := logits[tok] - maxv - float32(math.Log(cgo.SumExp(logits, maxv)))
		if math.IsNaN(float64(lp)) {
			return -1, lp
		}
		return tok, lp
	}
	n := len(logits)
	if cap(s.probs) < n {
		s.probs = make([]float32, n)
		s.cand = make([]int32, n)
	}
	probs, cand := s.probs[:n], s.cand[:0]
	invT := 1 / s.cfg.Temperature
	// Unnormalised probabilities; min-p is a threshold on them relative to
	// the best token, whose value is exactly 1.
	total := cgo.Softmax(logits, maxv, invT, probs)
	for i, p := range probs {
		if p >= s.cfg.MinP {
			cand = append(cand, int32(i))
		}
	}
	var logZ float64 // log of the raw (temperature 1) partition function
	if invT == 1 {
		logZ = math.Log(total)
	} else {
		logZ = math.Log(cgo.SumExp(logits, maxv))
	}
	filtered := len(cand) < n
	if k := s.cfg.TopK; k > 0 && k < len(cand) {
		cand = topByProb(cand, probs, k)
		filtered = true
	}
	if s.cfg.TopP < 1 {
		cand = nucleus(cand, probs, s.cfg.TopP)
		filtered = true
	}
	if filtered {
		total = 0
		for _, i := range cand {
			total += float64(probs[i])
		}
	}
	if len(cand) == 0 || math.IsNaN(logZ) || math.IsInf(logZ, 0) {
		// The logits were not finite (every probability NaN, or some
		// NaN or infinite): no log-probability to report.
		return -1, float32(math.NaN())
	}
	tok, ok := drawCandidate(cand, probs, s.rng.Float64()*total)
	if !ok {
		// The kernel's total, summed in float32 lanes, exceeded the
		// candidates' sum in float64, and the draw fell past the last
		// one: draw again over that sum (a rare path, about 1e-7 of
		// tokens, where the last candidate would otherwise win).
		total = 0
		for _, i := range cand {
			total += float64(probs[i])
		}
		tok, _ = drawCandidate(cand, probs, s.rng.Float64()*total)
	}
	return tok, logits[tok] - maxv - float32(logZ)
}

// drawCandidate picks the candidate where r, in [0, the candidates' total), falls
// in their cumulative probabilities; ok is false (and the last candidate
// returned) when r is past them all.
func drawCandidate(cand []int32, probs []float32, r float64) (tok int32, ok bool) {
	for _, i := range cand {
		r -= float64(probs[i])
		if r < 0 {
			return i, true
		}
	}
	return cand[len(cand)-1], false
}

// topByProb returns the k most probable candidates, most probable first.
func topByProb(cand []int32, probs []float32, k int) []int32 {
	slices.SortFunc(cand, func(a, b int32) int {
		switch {
		case probs[a] > probs[b]:
			return -1
		case probs[a] < probs[b]:
			return 1
		}
		return int(a - b)
	})
	return cand[:k]
}

// nucleus keeps the smallest most-probable prefix of cand whose mass
// reaches p of the candidates' total.
func nucleus(cand []int32, probs []float32, p float32) []int32 {
	var total float64
	for _, i := range cand {
		total += float64(probs[i])
	}
	cand = topByProb(cand, probs, len(cand))
	var acc float64
	for j, i := range cand {
		acc += float64(probs[i])
		if acc >= float64(p)*total {
			return cand[:j+1]
		}
	}
	return cand
}
