package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestResumeMatchesUninterruptedRun trains six steps with dropout (so that
// the generator state matters) and a warm-up and decay schedule, and
// compares the losses with three steps, a checkpoint, a fresh trainer
// (holding a gradient of its own) restored from it, and three more steps.
func TestResumeMatchesUninterruptedRun(t *testing.T) {
	cfg := Config{Seed: 4, LoRA: LoRAConfig{Rank: 4, Dropout: 0.1}, Optimizer: AdamW{LR: 1e-2, WeightDecay: 0.01},
		Schedule: Schedule{Warmup: 2, Total: 6}}
	seqs := testSequences(300, 21)
	run := func(tr *Trainer, steps int) []float64 {
		var losses []float64
		for range steps {
			r, err := tr.Accumulate(seqs, CrossEntropy{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Step(); err != nil {
				t.Fatal(err)
			}
			losses = append(losses, r.Loss)
		}
		return losses
	}
	want := run(newMicro(t, cfg), 6)

	first := newMicro(t, cfg)
	got := run(first, 3)
	path := filepath.Join(t.TempDir(), "checkpoint.gguf")
	type cursor struct{ Epoch, Batch int }
	if err := first.SaveCheckpoint(path, cursor{Epoch: 1, Batch: 7}); err != nil {
		t.Fatal(err)
	}
	resumed := newMicro(t, Config{LoRA: LoRAConfig{Rank: 4}}) // the rest comes from the checkpoint
	// A gradient pending when the checkpoint is loaded is discarded, with
	// its count of targets: left behind, either would change the next step.
	if _, err := resumed.Accumulate(testSequences(300, 5), CrossEntropy{}); err != nil {
		t.Fatal(err)
	}
	var c cursor
	if err := resumed.LoadCheckpoint(path, &c); err != nil {
		t.Fatal(err)
	}
	if c != (cursor{1, 7}) || resumed.StepCount() != 3 {
		t.Fatalf("restored cursor %+v at step %d", c, resumed.StepCount())
	}
	got = append(got, run(resumed, 3)...)
	for i := range want {
		if d := got[i] - want[i]; d > 1e-5 || d < -1e-5 {
			t.Errorf("step %d: loss %.7f after resuming, %.7f uninterrupted", i+1, got[i], want[i])
		}
	}
	t.Logf("losses %v", got)
	// Dropout makes the generator state matter: without restoring it the
	// losses differ.
	other := newMicro(t, Config{LoRA: LoRAConfig{Rank: 4}})
	if err := other.LoadCheckpoint(path, nil); err != nil {
		t.Fatal(err)
	}
	other.rng.Uint64()
	if l := run(other, 1)[0]; l == want[3] {
		t.Error("a different dropout mask gave the same loss: the comparison proves nothing")
	}
}

func TestCheckpointErrors(t *testing.T) {
	tr := newMicro(t, Config{LoRA: LoRAConfig{Rank: 4}})
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint.gguf")
	if _, err := tr.Accumulate(testSequences(300, 1), CrossEntropy{}); err != nil {
		t.Fatal(err)
	}
	if err := tr.SaveCheckpoint(path, nil); err == nil {
		t.Error("checkpoint with accumulated gradients accepted")
	}
	if _, err := tr.Step(); err != nil {
		t.Fatal(err)
	}
	if err := tr.SaveCheckpoint(path, nil); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]Config{
		"other rank": {LoRA: LoRAConfig{Rank: 8}},
		"full mode":  {Full: true},
	} {
		other := newMicro(t, cfg)
		if err := other.LoadCheckpoint(path, nil); err == nil {
			t.Errorf("%s: checkpoint accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.gguf")
	if err := os.WriteFile(truncated, raw[:len(raw)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := newMicro(t, Config{LoRA: LoRAConfig{Rank: 4}})
	before := append([]float32(nil), fresh.net.params[0].value...)
	if err := fresh.LoadCheckpoint(truncated, nil); err == nil {
		t.Error("truncated checkpoint accepted")
	}
	for i, v := range fresh.net.params[0].value {
		if v != before[i] {
			t.Fatal("a failed load changed the parameters")
		}
	}
}

// TestRunInterruptAndResume cancels a run, after its third step or
// between the two micro-batches of its third (accumulation 2: the first
// has drawn its dropout masks), and resumes it from the checkpoint Run
// writes: the losses continue as in an uninterrupted run.
func TestRunInterruptAndResume(t *testing.T) {
	cfg := Config{Seed: 2, LoRA: LoRAConfig{Rank: 4, Dropout: 0.05}, Optimizer: AdamW{LR: 5e-3}, Schedule: Schedule{Warmup: 1}}
	var seqs []Sequence
	for i := range 6 {
		seqs = append(seqs, testSequences(300, uint64(30+i))...)
	}
	opts := RunOptions{Epochs: 2, BatchTokens: 40, Accumulate: 2, Seed: 5}
	var want []float64
	opts.Progress = func(p Progress) { want = append(want, p.Loss) }
	res, err := Run(context.Background(), newMicro(t, cfg), seqs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != len(want) || res.Steps < 6 {
		t.Fatalf("%d steps, %d progress reports", res.Steps, len(want))
	}

	for _, midStep := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var got []float64
		opts.CheckpointDir = t.TempDir()
		opts.Progress = func(p Progress) {
			got = append(got, p.Loss)
			if p.Step == 3 && !midStep {
				cancel()
			}
		}
		opts.Loss = nil
		if midStep {
			opts.Loss = &seen{counts: map[*int32]int{}, cancelAt: 5, cancel: cancel} // the first micro-batch of step 3
		}
		taken := 3
		if midStep {
			taken = 2
		}
		if _, err := Run(ctx, newMicro(t, cfg), seqs, opts); !errors.Is(err, ErrInterrupted) || len(got) != taken {
			t.Fatalf("mid-step %v: cancelled run: %v after %d steps, want an interrupt after %d", midStep, err, len(got), taken)
		}
		opts.Resume = true
		if _, err := Run(context.Background(), newMicro(t, cfg), seqs, opts); err != nil {
			t.Fatal(err)
		}
		opts.Resume = false
		if len(got) != len(want) {
			t.Fatalf("mid-step %v: %d steps interrupted and resumed, %d uninterrupted", midStep, len(got), len(want))
		}
		for i := range want {
			if d := got[i] - want[i]; d > 1e-5 || d < -1e-5 {
				t.Errorf("mid-step %v, step %d: loss %.7f resumed, %.7f uninterrupted", midStep, i+1, got[i], want[i])
			}
		}
	}
}

// seen is CrossEntropy that counts how often each sequence (by its first
// token's address) is trained on, and can cancel the run at its n-th
// micro-batch.
type seen struct {
	CrossEntropy
	counts   map[*int32]int
	calls    int
	cancelAt int
	cancel   func()
}

func (s *seen) Eval(seqs []Sequence, logp, grad [][]float32) (float64, map[string]float64, error) {
	s.calls++
	for _, q := range seqs {
		s.counts[&q.Tokens[0]]++
	}
	if s.calls == s.cancelAt {
		s.cancel()
	}
	return s.CrossEntropy.Eval(seqs, logp, grad)
}

// TestRunTrainsEverySequenceOnceAnEpoch: each epoch's shuffle splits the
// data into micro-batches of its own, as many or not as another epoch's,
// and a run trains on every sequence once an epoch: also when it resumes,
// after an interrupt, with other batch settings, as a run whose
// micro-batch outgrew memory is told to.
func TestRunTrainsEverySequenceOnceAnEpoch(t *testing.T) {
	var seqs []Sequence // of 23 and 14 tokens
	for i := range 6 {
		seqs = append(seqs, testSequences(300, uint64(80+i))...)
	}
	seed := uint64(1)
	for len(microBatches(seqs, 40, seed, 0, 0)) == len(microBatches(seqs, 40, seed, 1, 0)) {
		seed++
	}
	counts := func(s *seen, want int) {
		t.Helper()
		for i := range seqs {
			if n := s.counts[&seqs[i].Tokens[0]]; n != want {
				t.Errorf("sequence %d trained on %d times, want %d", i, n, want)
			}
		}
	}
	loss := &seen{counts: map[*int32]int{}}
	res, err := Run(context.Background(), newMicro(t, Config{}), seqs, RunOptions{Epochs: 2, BatchTokens: 40, Seed: seed, Loss: loss})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(microBatches(seqs, 40, seed, 0, 0)) + len(microBatches(seqs, 40, seed, 1, 0)); res.Steps != want {
		t.Errorf("%d steps, want %d: the micro-batches of both epochs", res.Steps, want)
	}
	counts(loss, 2)

	ctx, cancel := context.WithCancel(context.Background())
	loss = &seen{counts: map[*int32]int{}, cancelAt: 3, cancel: cancel}
	opts := RunOptions{BatchTokens: 40, Seed: seed, Loss: loss, CheckpointDir: t.TempDir()}
	if _, err := Run(ctx, newMicro(t, Config{}), seqs, opts); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("cancelled run: %v", err)
	}
	// Cancelled in its third micro-batch, the run took that step (the
	// context is read between micro-batches): loss has counted the three
	// micro-batches trained on before the checkpoint.
	opts.BatchTokens, opts.Accumulate, opts.Resume = 20, 2, true
	if _, err := Run(context.Background(), newMicro(t, Config{}), seqs, opts); err != nil {
		t.Fatal(err)
	}
	counts(loss, 1)
}
