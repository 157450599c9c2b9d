package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentrl/agentrl/cgo"
)

// testSequences are two sequences of different lengths with a mix of
// context (0), target (1) and advantage-like (real) weights.
func testSequences(vocab int, seed uint64) []Sequence {
	rng := rand.New(rand.NewPCG(seed, 1))
	var seqs []Sequence
	for _, n := range []int{23, 14} {
		s := Sequence{Tokens: make([]int32, n), Weights: make([]float32, n)}
		for i := range s.Tokens {
			s.Tokens[i] = int32(rng.IntN(vocab))
			switch {
			case i < 4:
			case i%5 == 0:
				s.Weights[i] = -0.5
			case i%3 == 0:
				s.Weights[i] = 2
			default:
				s.Weights[i] = 1
			}
		}
		seqs = append(seqs, s)
	}
	return seqs
}

// perturb sets every parameter to small random values, so that no
// gradient is zero by construction (LoRA's B starts at zero, which makes
// A's gradient vanish).
func perturb(tr *Trainer, scale float64, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	for _, p := range tr.net.params {
		if tr.cfg.Full {
			for i := range p.value {
				p.value[i] *= float32(1 + 0.1*rng.NormFloat64())
			}
			continue
		}
		values := make([]float32, p.size())
		for i := range values {
			values[i] = float32(scale * rng.NormFloat64())
		}
		p.fromFile(p.value, values) // a LoRA rank's padding stays zero
	}
	tr.net.uploadParams()
}

// lossFromLogProbs evaluates the weighted cross-entropy from a forward
// pass only, in float64.
func lossFromLogProbs(t *testing.T, tr *Trainer, seqs []Sequence) float64 {
	t.Helper()
	lp, err := tr.LogProbs(seqs)
	if err != nil {
		t.Fatal(err)
	}
	z := normalizer(seqs, ByWeight)
	loss := 0.0
	for s, seq := range seqs {
		for i := range seq.Tokens {
			loss -= float64(seq.weight(i)) * float64(lp[s][i]) / z
		}
	}
	return loss
}

// fdNoise bounds the error of the finite differences themselves: the
// forward pass runs in float32, so the loss carries rounding noise of
// about 1e-7 that the difference quotient divides by the step.
const fdNoise = 5e-6

// checkGradients compares, for every parameter tensor, the gradients of
// its two largest entries with finite differences: they must agree within
// a relative error of 1e-2 (plus fdNoise absolute).
func checkGradients(t *testing.T, tr *Trainer, seqs []Sequence, eps float64) {
	t.Helper()
	tr.ZeroGrad()
	if _, err := tr.Accumulate(seqs, CrossEntropy{}); err != nil {
		t.Fatal(err)
	}
	worst, worstLarge, checked := 0.0, 0.0, 0
	for _, p := range tr.net.params {
		idx := make([]int, len(p.grad))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int {
			return -cmpFloat(math.Abs(float64(p.grad[a])), math.Abs(float64(p.grad[b])))
		})
		for _, i := range idx[:2] {
			g := float64(p.grad[i]) / tr.accumTargets // the mean Step applies
			fd := finiteDifference(t, tr, seqs, p, i, eps)
			diff, scale := math.Abs(fd-g), math.Max(math.Abs(fd), math.Abs(g))
			if scale == 0 {
				t.Errorf("%s: gradient and finite difference are both zero", p.name)
				continue
			}
			worst = math.Max(worst, diff/scale)
			if scale > 1e-3 {
				worstLarge = math.Max(worstLarge, diff/scale)
			}
			checked++
			if diff > 1e-2*scale+fdNoise {
				t.Errorf("%s[%d]: backward %.6g, finite difference %.6g (relative error %.2g)", p.name, i, g, fd, diff/scale)
			}
		}
	}
	t.Logf("%d gradients of %d tensors checked: worst relative error %.2e (%.2e among those above 1e-3)", checked, len(tr.net.params), worst, worstLarge)
	tr.ZeroGrad()
}

// finiteDifference is the derivative of the loss in parameter entry i,
// by central differences with steps h and h/2 combined (Richardson
// extrapolation), which cancels the h^2 error term: the forward pass runs
// in float32, so h cannot be small.
func finiteDifference(t *testing.T, tr *Trainer, seqs []Sequence, p *param, i int, h float64) float64 {
	orig := p.value[i]
	central := func(h float64) float64 {
		p.value[i] = orig + float32(h)
		p.upload()
		up := lossFromLogProbs(t, tr, seqs)
		p.value[i] = orig - float32(h)
		p.upload()
		down := lossFromLogProbs(t, tr, seqs)
		return (up - down) / (float64(orig+float32(h)) - float64(orig-float32(h)))
	}
	d := (4*central(h/2) - central(h)) / 3
	p.value[i] = orig
	p.upload()
	return d
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// productModes are the two ways the trainer computes matrix products on
// the CPU: ggml's kernels and, where one is installed, a BLAS library.
func productModes(t *testing.T) map[string]bool {
	modes := map[string]bool{"ggml": true}
	if name, err := cgo.BLAS(); err != nil {
		t.Fatal(err)
	} else if name != "" {
		modes["blas"] = false
	}
	return modes
}

// gradientCheck checks the gradients of the model at path for every
// architecture and both kinds of products; path gives the model of an
// architecture, cfg the trainer's configuration.
func gradientCheck(t *testing.T, path func(t *testing.T, arch string) string, cfg Config, lora float64, seed uint64) {
	for products, noBLAS := range productModes(t) {
		for _, arch := range []string{"llama", "qwen2", "qwen3"} {
			// Attention as one square, and in blocks of 16 queries.
			for _, block := range []int{0, 16} {
				t.Run(fmt.Sprintf("%s/%s/block%d", products, arch, block), func(t *testing.T) {
					c := cfg
					c.Threads, c.NoBLAS = 1, noBLAS
					tr, err := New(path(t, arch), c)
					if err != nil {
						t.Fatal(err)
					}
					defer tr.Close()
					tr.net.attnBlock = block
					if got := tr.MatrixProducts(); (got == "ggml") != noBLAS {
						t.Fatalf("matrix products by %s with NoBLAS %v", got, noBLAS)
					}
					if advice := tr.SpeedAdvice(); advice != "" && (noBLAS || tr.MatrixProducts() != "ggml") {
						t.Fatalf("SpeedAdvice %q with NoBLAS %v and matrix products by %s: it is for a CPU trainer without a library", advice, noBLAS, tr.MatrixProducts())
					}
					perturb(tr, lora, 1)
					checkGradients(t, tr, testSequences(tr.h.Vocab, seed), 4e-2)
				})
			}
		}
	}
}

func TestGradientsLoRA(t *testing.T) {
	gradientCheck(t, func(t *testing.T, arch string) string {
		path := makeModel(t, "micro", microConfig(5))
		if arch != "llama" {
			path = convertArch(t, path, arch)
		}
		return path
	}, Config{LoRA: LoRAConfig{Rank: 4, Alpha: 8}}, 0.05, 3)
}

func TestGradientsFull(t *testing.T) {
	gradientCheck(t, func(t *testing.T, arch string) string {
		if arch != "llama" {
			return convertArch(t, makeModel(t, "micro", microConfig(5)), arch)
		}
		cfg := microConfig(6)
		cfg.SeparateOutput = true
		return makeModel(t, "micro-sep", cfg)
	}, Config{Full: true}, 0, 4)
}
