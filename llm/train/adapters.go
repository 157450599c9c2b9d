package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// DefaultAdapter names the adapter New creates when Config.Adapter is
// empty.
const DefaultAdapter = "default"

// AdapterOptions configure an adapter added with AddAdapter. A zero
// Optimizer or Schedule takes the active adapter's as they are then (a
// learning rate SetLR changed, a schedule length Run set); an Optimizer
// given in part has AdamW's defaults for the rest, not the trainer's.
type AdapterOptions struct {
	Optimizer AdamW
	Schedule  Schedule
	// Seed drives the adapter's initialisation (default the trainer's
	// seed, which gives the same initial values as New's adapter).
	Seed uint64
}

// adapter is one named LoRA adapter's trainable state: the values,
// gradients and AdamW moments of every parameter of the network, in
// network order, with its own optimiser settings and step count. The
// active adapter's slices are the ones the network's parameters point to.
type adapter struct {
	value, grad, m, v [][]float32
	step, accum       int
	optimizer         AdamW
	schedule          Schedule
}

// AddAdapter adds a LoRA adapter named name on the same base weights, with
// the trainer's rank, alpha and targets and its own optimiser state. The
// active adapter does not change (see UseAdapter). An adapter costs four
// copies of its parameters in memory (values, gradients, two moments);
// the base model is never duplicated.
func (t *Trainer) AddAdapter(name string, opts AdapterOptions) error {
	switch {
	case t.cfg.Full:
		return errors.New("add adapter: the trainer trains every weight, not LoRA adapters")
	case name == "":
		return errors.New("add adapter: empty name")
	case t.adapters[name] != nil:
		return fmt.Errorf("add adapter %q: the trainer has one of that name", name)
	}
	opt := t.cfg.Optimizer
	if opts.Optimizer != (AdamW{}) {
		opt = opts.Optimizer.withDefaults()
	}
	if err := opt.validate(); err != nil {
		return fmt.Errorf("add adapter %q: %w", name, err)
	}
	sched := t.cfg.Schedule
	if opts.Schedule != (Schedule{}) {
		sched = opts.Schedule
	}
	if err := sched.validate(); err != nil {
		return fmt.Errorf("add adapter %q: %w", name, err)
	}
	seed := opts.Seed
	if seed == 0 {
		seed = t.cfg.Seed
	}
	a := &adapter{optimizer: opt, schedule: sched}
	rng := rand.New(rand.NewPCG(seed, loraStream))
	for _, p := range t.net.params {
		n := len(p.value)
		value := make([]float32, n)
		if p.pad != nil && p.pad.axis == 1 {
			initLoRAA(value, p, rng)
		}
		a.value = append(a.value, value)
		a.grad = append(a.grad, make([]float32, n))
		a.m = append(a.m, make([]float32, n))
		a.v = append(a.v, make([]float32, n))
	}
	t.adapters[name] = a
	return nil
}

// UseAdapter makes name the adapter that LogProbs, Accumulate, Step,
// SaveAdapter, LoadAdapter and the checkpoints act on. Switching copies
// the adapter's values to the backend (a few megabytes for a small model);
// gradients must be applied or discarded first.
func (t *Trainer) UseAdapter(name string) error {
	if name == t.active {
		return nil
	}
	next := t.adapters[name]
	if next == nil {
		return fmt.Errorf("use adapter %q: no such adapter (the trainer has %v)", name, t.AdapterNames())
	}
	if t.accum != 0 {
		return fmt.Errorf("use adapter %q: adapter %q has accumulated gradients; call Step or ZeroGrad first", name, t.active)
	}
	t.storeActive()
	for i, p := range t.net.params {
		p.value, p.grad, p.m, p.v = next.value[i], next.grad[i], next.m[i], next.v[i]
	}
	t.step, t.accum = next.step, next.accum
	t.cfg.Optimizer, t.cfg.Schedule = next.optimizer, next.schedule
	t.active = name
	t.net.uploadParams()
	return nil
}

// storeActive records the active adapter's current state under its name.
func (t *Trainer) storeActive() {
	a := t.adapters[t.active]
	for i, p := range t.net.params {
		a.value[i], a.grad[i], a.m[i], a.v[i] = p.value, p.grad, p.m, p.v
	}
	a.step, a.accum = t.step, t.accum
	a.optimizer, a.schedule = t.cfg.Optimizer, t.cfg.Schedule
}

// ActiveAdapter is the name of the adapter in use.
func (t *Trainer) ActiveAdapter() string { return t.active }

// AdapterNames lists the trainer's adapters, sorted.
func (t *Trainer) AdapterNames() []string {
	names := make([]string, 0, len(t.adapters))
	for n := range t.adapters {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// AdapterStateBytes is the memory one adapter's state takes in Go: values,
// gradients and two moments of every trainable parameter, as computed
// (with the rank padding).
func (t *Trainer) AdapterStateBytes() int64 {
	n := int64(0)
	for _, p := range t.net.params {
		n += int64(len(p.value))
	}
	return 4 * 4 * n
}

// loraStream is the generator stream of LoRA initialisations ("LoRA").
const loraStream = 0x4c6f5241

// initLoRAA draws the initial values of a LoRA A matrix (value, in p's
// computed layout) uniformly in ±1/sqrt(in), leaving the rank padding
// zero; B starts at zero, so a new adapter leaves the model unchanged.
func initLoRAA(value []float32, p *param, rng *rand.Rand) {
	in := p.shape[0]
	bound := 1 / math.Sqrt(float64(in))
	for i := range value[:in*p.pad.rank] {
		value[i] = float32((2*rng.Float64() - 1) * bound)
	}
}

// SetLR sets the active adapter's peak learning rate, for algorithms that
// train one adapter at different rates in different phases (a warm start
// on demonstrations, then reinforcement learning). Checkpoints keep it.
func (t *Trainer) SetLR(lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("learning rate %g must be positive", lr)
	}
	t.cfg.Optimizer.LR = lr
	return nil
}
