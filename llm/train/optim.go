package train

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/agentrl/agentrl/cgo"
)

// AdamW configures the optimiser: Adam with decoupled weight decay, as
// PyTorch's torch.optim.AdamW, after clipping the global gradient norm.
type AdamW struct {
	LR          float64 `json:"lr"`           // peak learning rate (default 1e-4)
	Beta1       float64 `json:"beta1"`        // default 0.9
	Beta2       float64 `json:"beta2"`        // default 0.999
	Eps         float64 `json:"eps"`          // default 1e-8
	WeightDecay float64 `json:"weight_decay"` // applied to matrices only; default 0
	// ClipNorm scales the gradient down to this global L2 norm when it is
	// larger (default 1); a negative value disables clipping.
	ClipNorm float64 `json:"clip_norm"`
}

func (a AdamW) withDefaults() AdamW {
	if a.LR == 0 {
		a.LR = 1e-4
	}
	if a.Beta1 == 0 {
		a.Beta1 = 0.9
	}
	if a.Beta2 == 0 {
		a.Beta2 = 0.999
	}
	if a.Eps == 0 {
		a.Eps = 1e-8
	}
	if a.ClipNorm == 0 {
		a.ClipNorm = 1
	}
	return a
}

func (a AdamW) validate() error {
	switch {
	case !(a.LR > 0):
		return fmt.Errorf("learning rate %g must be positive", a.LR)
	case !(a.Beta1 >= 0 && a.Beta1 < 1) || !(a.Beta2 >= 0 && a.Beta2 < 1):
		return fmt.Errorf("betas %g, %g must be in [0, 1)", a.Beta1, a.Beta2)
	case !(a.Eps > 0) || !(a.WeightDecay >= 0) || math.IsNaN(a.ClipNorm):
		return fmt.Errorf("eps %g must be positive, weight decay %g non-negative, clip norm %g a number", a.Eps, a.WeightDecay, a.ClipNorm)
	}
	return nil
}

// Schedule shapes the learning rate over the optimiser steps: a linear
// warm-up from 0 to the peak over Warmup steps, then a decay to
// MinLRRatio times the peak at step Total (cosine or linear), or a
// constant rate.
type Schedule struct {
	Warmup     int     `json:"warmup"`
	Total      int     `json:"total"` // 0 keeps the peak after warm-up
	Decay      string  `json:"decay"` // "cosine" (default), "linear" or "constant"
	MinLRRatio float64 `json:"min_lr_ratio"`
}

func (s Schedule) validate() error {
	switch s.Decay {
	case "", "cosine", "linear", "constant":
	default:
		return fmt.Errorf("learning-rate decay %q (want cosine, linear or constant)", s.Decay)
	}
	if s.Warmup < 0 || s.Total < 0 || s.MinLRRatio < 0 || s.MinLRRatio > 1 {
		return fmt.Errorf("schedule: warm-up %d and total %d must be >= 0, min ratio %g in [0, 1]", s.Warmup, s.Total, s.MinLRRatio)
	}
	return nil
}

// Factor is the multiplier of the peak rate at step (counted from 0).
func (s Schedule) Factor(step int) float64 {
	if step < s.Warmup {
		return float64(step+1) / float64(s.Warmup)
	}
	if s.Total <= s.Warmup || s.Decay == "constant" {
		return 1
	}
	progress := math.Min(1, float64(step-s.Warmup)/float64(s.Total-s.Warmup))
	decay := 1 - progress
	if s.Decay == "" || s.Decay == "cosine" {
		decay = 0.5 * (1 + math.Cos(math.Pi*progress))
	}
	return s.MinLRRatio + (1-s.MinLRRatio)*decay
}

// adamStep applies one AdamW update to the parameters from their
// accumulated gradients, each multiplied by gradScale, at learning rate lr
// and (1-based) step t. The work is split in chunks over the cores.
func adamStep(params []*param, opt AdamW, lr, gradScale float64, t int) {
	step := cgo.AdamWStep{
		GradScale: float32(gradScale),
		Beta1:     float32(opt.Beta1),
		Beta2:     float32(opt.Beta2),
		StepSize:  float32(lr / (1 - math.Pow(opt.Beta1, float64(t)))),
		SqrtB2C:   float32(math.Sqrt(1 - math.Pow(opt.Beta2, float64(t)))),
		Eps:       float32(opt.Eps),
	}
	update := func(p *param, lo, hi int) {
		s := step
		s.Decay = 1
		if p.decay {
			s.Decay = float32(1 - lr*opt.WeightDecay)
		}
		cgo.AdamW(p.value[lo:hi], p.m[lo:hi], p.v[lo:hi], p.grad[lo:hi], s)
	}
	const chunk = 1 << 16
	work := make(chan func(), 64)
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				f()
			}
		}()
	}
	for _, p := range params {
		for lo := 0; lo < len(p.value); lo += chunk {
			hi := min(lo+chunk, len(p.value))
			work <- func() { update(p, lo, hi) }
		}
	}
	close(work)
	wg.Wait()
}

// gradNorm is the global L2 norm of the accumulated gradients.
func gradNorm(params []*param) float64 {
	sum := 0.0
	for _, p := range params {
		for _, g := range p.grad {
			sum += float64(g) * float64(g)
		}
	}
	return math.Sqrt(sum)
}
