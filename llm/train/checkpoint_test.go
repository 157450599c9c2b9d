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

// TestRunInterruptAndResume cancels a run after its third step and resumes
// it from the checkpoint Run writes: the losses continue as in an
// uninterrupted run.
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

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var got []float64
	opts.CheckpointDir = dir
	opts.Progress = func(p Progress) {
		got = append(got, p.Loss)
		if p.Step == 3 {
			cancel()
		}
	}
	_, err = Run(ctx, newMicro(t, cfg), seqs, opts)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("cancelled run: %v", err)
	}
	opts.Resume = true
	if _, err := Run(context.Background(), newMicro(t, cfg), seqs, opts); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d steps interrupted and resumed, %d uninterrupted", len(got), len(want))
	}
	for i := range want {
		if d := got[i] - want[i]; d > 1e-5 || d < -1e-5 {
			t.Errorf("step %d: loss %.7f resumed, %.7f uninterrupted", i+1, got[i], want[i])
		}
	}
}
