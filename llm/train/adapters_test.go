package train

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm/gguf"
	"github.com/agentrl/agentrl/llm/initmodel"
)

// logProbsOf returns the trainer's log-probabilities of seqs under its
// active adapter.
func logProbsOf(t *testing.T, tr *Trainer, seqs []Sequence) [][]float32 {
	t.Helper()
	lp, err := tr.LogProbs(seqs)
	if err != nil {
		t.Fatal(err)
	}
	return lp
}

func equalLogProbs(a, b [][]float32) bool {
	return slices.EqualFunc(a, b, func(x, y []float32) bool { return slices.Equal(x, y) })
}

// TestAdaptersAreIndependent trains two adapters of one trainer in turn
// and checks that each follows exactly the trajectory it would alone: the
// actor's log-probabilities after interleaved training equal those of a
// trainer that trained only the actor, and the critic starts from the
// base model whatever the actor did.
func TestAdaptersAreIndependent(t *testing.T) {
	seqs := fixedText(300, false)
	other := fixedText(300, true)
	alone := newMicro(t, Config{Adapter: "actor", Seed: 9})
	memorise(t, alone, seqs, 3)
	want := logProbsOf(t, alone, seqs)

	tr := newMicro(t, Config{Adapter: "actor", Seed: 9})
	base, err := tr.BaseLogProbs(seqs)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.AddAdapter("critic", AdapterOptions{Optimizer: AdamW{LR: 3e-3}, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	if got := tr.AdapterNames(); !slices.Equal(got, []string{"actor", "critic"}) || tr.ActiveAdapter() != "actor" {
		t.Fatalf("adapters %v, active %q", got, tr.ActiveAdapter())
	}
	for range 3 {
		memorise(t, tr, seqs, 1)
		if err := tr.UseAdapter("critic"); err != nil {
			t.Fatal(err)
		}
		memorise(t, tr, other, 1)
		if err := tr.UseAdapter("actor"); err != nil {
			t.Fatal(err)
		}
	}
	if got := logProbsOf(t, tr, seqs); !equalLogProbs(got, want) {
		t.Fatal("the actor trained between critic steps differs from the actor trained alone")
	}
	if tr.StepCount() != 3 {
		t.Fatalf("actor at step %d, want 3", tr.StepCount())
	}

	// A new adapter leaves the model as it is (B starts at zero).
	if err := tr.AddAdapter("discriminator", AdapterOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tr.UseAdapter("discriminator"); err != nil {
		t.Fatal(err)
	}
	if got := logProbsOf(t, tr, seqs); !equalLogProbs(got, base) {
		t.Fatal("a new adapter changed the model's log-probabilities")
	}
	if tr.StepCount() != 0 || tr.Config().Optimizer != alone.Config().Optimizer {
		t.Fatalf("new adapter: step %d, optimiser %+v", tr.StepCount(), tr.Config().Optimizer)
	}
	if err := tr.UseAdapter("critic"); err != nil {
		t.Fatal(err)
	}
	if tr.StepCount() != 3 || tr.Config().Optimizer.LR != 3e-3 {
		t.Fatalf("critic: step %d, lr %g", tr.StepCount(), tr.Config().Optimizer.LR)
	}

	// Each adapter saves and restores its own checkpoint.
	dir := t.TempDir()
	criticLP := logProbsOf(t, tr, other)
	if err := tr.SaveCheckpoint(filepath.Join(dir, "critic.ckpt"), nil); err != nil {
		t.Fatal(err)
	}
	memorise(t, tr, other, 1)
	if err := tr.LoadCheckpoint(filepath.Join(dir, "critic.ckpt"), nil); err != nil {
		t.Fatal(err)
	}
	if got := logProbsOf(t, tr, other); !equalLogProbs(got, criticLP) || tr.StepCount() != 3 {
		t.Fatal("the critic's checkpoint did not restore it")
	}
	if err := tr.UseAdapter("actor"); err != nil {
		t.Fatal(err)
	}
	if got := logProbsOf(t, tr, seqs); !equalLogProbs(got, want) {
		t.Fatal("restoring the critic changed the actor")
	}
}

func TestNamedAdapterErrors(t *testing.T) {
	tr := newMicro(t, Config{})
	if tr.ActiveAdapter() != DefaultAdapter {
		t.Fatalf("active adapter %q, want %q", tr.ActiveAdapter(), DefaultAdapter)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{tr.AddAdapter(DefaultAdapter, AdapterOptions{}), "has one of that name"},
		{tr.AddAdapter("", AdapterOptions{}), "empty name"},
		{tr.AddAdapter("bad", AdapterOptions{Optimizer: AdamW{LR: -1}}), "bad"},
		{tr.UseAdapter("missing"), "no such adapter"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", c.err, c.want)
		}
	}
	if err := tr.AddAdapter("critic", AdapterOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Accumulate(fixedText(300, false), CrossEntropy{}); err != nil {
		t.Fatal(err)
	}
	if err := tr.UseAdapter("critic"); err == nil || !strings.Contains(err.Error(), "accumulated gradients") {
		t.Fatalf("switching with pending gradients: %v", err)
	}
	full := newMicro(t, Config{Full: true})
	if err := full.AddAdapter("critic", AdapterOptions{}); err == nil {
		t.Fatal("full-parameter training accepted an adapter")
	}
}

// TestTargetsProbeTheDistribution reads the log-probability of another
// token than the one in the sequence: it equals the log-probability of a
// sequence that holds that token there, while the context goes on
// unchanged for later positions.
func TestTargetsProbeTheDistribution(t *testing.T) {
	tr := newMicro(t, Config{})
	tokens := []int32{5, 17, 42, 99, 7, 123}
	probe := Sequence{Tokens: tokens, Weights: []float32{0, 0, 1, 0, 0, 1}, Targets: []int32{0, 0, 250, 0, 0, 9}}
	got := logProbsOf(t, tr, []Sequence{probe})
	want := logProbsOf(t, tr, []Sequence{{Tokens: []int32{5, 17, 250}}, {Tokens: []int32{5, 17, 42, 99, 7, 9}}})
	if got[0][2] != want[0][2] || got[0][5] != want[1][5] {
		t.Fatalf("probes %g, %g; tokens in place %g, %g", got[0][2], got[0][5], want[0][2], want[1][5])
	}
	bad := probe
	bad.Targets = []int32{0, 0, 1000, 0, 0, 0}
	if _, err := tr.LogProbs([]Sequence{bad}); err == nil || !strings.Contains(err.Error(), "target 1000") {
		t.Fatalf("want an error for a target outside the vocabulary, got %v", err)
	}
}

// TestEMAFollowsItsAdapter: an average follows the adapter it was started
// on, even while another adapter is active and changing.
func TestEMAFollowsItsAdapter(t *testing.T) {
	tr := newMicro(t, Config{})
	perturb(tr, 0.05, 5)
	ema := tr.NewEMA()
	own := make([][]float32, len(tr.net.params))
	for i, p := range tr.net.params {
		own[i] = append([]float32(nil), p.value...)
	}
	if err := tr.AddAdapter("other", AdapterOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tr.UseAdapter("other"); err != nil {
		t.Fatal(err)
	}
	perturb(tr, 0.5, 6)
	if err := ema.Update(0.5); err != nil {
		t.Fatal(err)
	}
	for i := range own {
		for k, v := range own[i] {
			if ema.values[i][k] != v {
				t.Fatalf("parameter %d[%d]: average %g moved away from its adapter's %g towards the active adapter", i, k, ema.values[i][k], v)
			}
		}
	}
}

// TestF16Base trains LoRA on a quantised model held as F16: the
// log-probabilities stay close to the quantised computation's, training
// works, and full-parameter training refuses the option.
func TestF16Base(t *testing.T) {
	path := makeModel(t, "tiny-q4_k", initmodel.Config{Preset: "tiny", Seed: 3, Type: gguf.TensorQ4_K})
	seqs := fixedText(512, false)
	quant, err := New(path, Config{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer quant.Close()
	f16, err := New(path, Config{Threads: 1, F16Base: true, Optimizer: AdamW{LR: 1e-2}})
	if err != nil {
		t.Fatal(err)
	}
	defer f16.Close()
	a, b := logProbsOf(t, quant, seqs), logProbsOf(t, f16, seqs)
	worst := 0.0
	for i := range a {
		for k := range a[i] {
			worst = max(worst, math.Abs(float64(a[i][k]-b[i][k])))
		}
	}
	t.Logf("max |log-prob difference|, Q4_K products vs F16 weights: %.3g", worst)
	if worst == 0 || worst > 0.5 {
		t.Fatalf("F16 weights give log-probs %g away from the quantised ones", worst)
	}
	first, last := memorise(t, f16, seqs, 20)
	if last > first-0.3 {
		t.Fatalf("LoRA on F16 base weights: loss %.3f -> %.3f", first, last)
	}
	if _, err := New(path, Config{Full: true, Dequantize: true, F16Base: true}); err == nil {
		t.Fatal("full-parameter training accepted F16 base weights")
	}
}
