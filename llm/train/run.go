package train

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// RunOptions configure Run. Zero values take the defaults noted.
type RunOptions struct {
	Epochs int // passes over the data (default 1)
	// BatchTokens bounds the tokens of one micro-batch (default 4096); a
	// longer sequence makes a micro-batch of its own.
	BatchTokens int
	// Accumulate is the number of micro-batches per optimiser step
	// (default 1).
	Accumulate int
	// MaxSteps ends the run after this many optimiser steps (0: none).
	MaxSteps int
	// Seed shuffles the sequences, differently each epoch.
	Seed uint64
	// Loss is the objective (default CrossEntropy{}).
	Loss Loss
	// CheckpointDir receives checkpoint.gguf every CheckpointEvery steps
	// (0: never) and when ctx is cancelled; "" disables checkpoints.
	CheckpointDir   string
	CheckpointEvery int
	// Resume continues from the checkpoint in CheckpointDir.
	Resume bool
	// Progress, when set, is called after every step.
	Progress func(Progress)
}

// Progress describes the run after a step.
type Progress struct {
	Step      int                `json:"step"`
	Steps     int                `json:"steps"`
	Epoch     int                `json:"epoch"` // from 1
	Loss      float64            `json:"loss"`  // over the step's targets (see Counted)
	LR        float64            `json:"lr"`
	GradNorm  float64            `json:"grad_norm"`
	Tokens    int                `json:"tokens"` // of this step
	TokensPS  float64            `json:"tokens_per_second"`
	Elapsed   time.Duration      `json:"elapsed_ns"`
	ETA       time.Duration      `json:"eta_ns"`
	Metrics   map[string]float64 `json:"metrics,omitempty"` // the micro-batches', weighted by their targets
	ActMemory int64              `json:"activation_bytes"`
}

// RunResult summarises a run.
type RunResult struct {
	Steps     int     `json:"steps"`
	FirstLoss float64 `json:"first_loss"`
	LastLoss  float64 `json:"last_loss"`
	Tokens    int64   `json:"tokens"`
	TokensPS  float64 `json:"tokens_per_second"`
}

// ErrInterrupted is returned by Run when its context is cancelled; the
// error it wraps names the checkpoint to resume from.
var ErrInterrupted = errors.New("training interrupted")

// CheckpointFile is the checkpoint's name in RunOptions.CheckpointDir.
const CheckpointFile = "checkpoint.gguf"

// cursor is Run's position in the data, kept in checkpoints at a step
// boundary: how many sequences of the epoch's shuffled order the steps
// before it trained on. Counted in sequences, not micro-batches, so that
// a run resumed with other batch settings (after a micro-batch outgrew
// the memory budget, say) goes on with the rest of the epoch. Batch, the
// next micro-batch, is what checkpoints written before 2026-12-06 hold
// instead: it is read with the run's own batch settings.
type cursor struct {
	Epoch int `json:"epoch"` // from 0
	Seqs  int `json:"seqs,omitempty"`
	Batch int `json:"batch,omitempty"`
}

// largestBatches are the micro-batches that need the most memory, as
// the trainer lays them out in rows (place): the one of the longest rows
// (attention grows with the square of a row's length) and the one of the
// most slots, rows x row length; one or two.
func largestBatches(t *Trainer, batches [][]Sequence) [][]Sequence {
	longest, most := 0, 0
	var longT, longB, mostSlots int
	for k, b := range batches {
		pl := place(b, t.cfg.RowTokens)
		B, T := len(pl.fill), pl.T
		if T > longT || T == longT && B > longB {
			longest, longT, longB = k, T, B
		}
		if B*T > mostSlots {
			most, mostSlots = k, B*T
		}
	}
	out := [][]Sequence{batches[longest]}
	if most != longest {
		out = append(out, batches[most])
	}
	return out
}

// microBatches splits the sequences, shuffled for the epoch, into
// micro-batches of up to budget tokens, leaving out the first skip of the
// shuffled order.
func microBatches(seqs []Sequence, budget int, seed uint64, epoch, skip int) [][]Sequence {
	order := rand.New(rand.NewPCG(seed, uint64(epoch))).Perm(len(seqs))
	order = order[min(skip, len(order)):]
	var batches [][]Sequence
	var cur []Sequence
	n := 0
	for _, i := range order {
		s := seqs[i]
		if len(cur) > 0 && n+len(s.Tokens) > budget {
			batches = append(batches, cur)
			cur, n = nil, 0
		}
		cur = append(cur, s)
		n += len(s.Tokens)
	}
	if len(cur) > 0 {
		batches = append(batches, cur)
	}
	return batches
}

// Run trains on the sequences for a number of epochs: shuffled
// micro-batches, gradient accumulation, AdamW steps on the trainer's
// schedule (whose Total, when zero, becomes the run's step count), and
// checkpoints. When ctx is cancelled it discards the unfinished step,
// writes a checkpoint and returns an error wrapping ErrInterrupted.
func Run(ctx context.Context, t *Trainer, seqs []Sequence, o RunOptions) (RunResult, error) {
	if o.Epochs == 0 {
		o.Epochs = 1
	}
	if o.BatchTokens == 0 {
		o.BatchTokens = 4096
	}
	if o.Accumulate == 0 {
		o.Accumulate = 1
	}
	if o.Loss == nil {
		o.Loss = CrossEntropy{}
	}
	if len(seqs) == 0 {
		return RunResult{}, errors.New("no training data")
	}
	if o.Epochs < 0 || o.BatchTokens < 0 || o.Accumulate < 0 || o.CheckpointEvery < 0 || o.MaxSteps < 0 {
		return RunResult{}, fmt.Errorf("epochs %d, batch tokens %d, accumulation %d, checkpoint interval %d and step limit %d must not be negative",
			o.Epochs, o.BatchTokens, o.Accumulate, o.CheckpointEvery, o.MaxSteps)
	}
	ckpt := ""
	if o.CheckpointDir != "" {
		ckpt = filepath.Join(o.CheckpointDir, CheckpointFile)
	}
	var at cursor
	if o.Resume {
		if ckpt == "" {
			return RunResult{}, errors.New("resume: no checkpoint directory")
		}
		if err := t.LoadCheckpoint(ckpt, &at); err != nil {
			return RunResult{}, fmt.Errorf("resume: %w", err)
		}
		if at.Seqs == 0 && at.Batch > 0 {
			batches := microBatches(seqs, o.BatchTokens, o.Seed, at.Epoch, 0)
			for _, mb := range batches[:min(at.Batch, len(batches))] {
				at.Seqs += len(mb)
			}
		}
	}
	// Each epoch's shuffle splits the data into micro-batches of its own,
	// as many or not as another's; split once, for the step count, the
	// memory check and the training alike.
	splits := make([][][]Sequence, o.Epochs)
	steps := t.step // taken before a resumed run
	for epoch := at.Epoch; epoch < o.Epochs; epoch++ {
		skip := 0
		if epoch == at.Epoch {
			skip = at.Seqs
		}
		splits[epoch] = microBatches(seqs, o.BatchTokens, o.Seed, epoch, skip)
		steps += (len(splits[epoch]) + o.Accumulate - 1) / o.Accumulate
	}
	if o.MaxSteps > 0 {
		steps = min(steps, o.MaxSteps)
	}
	if t.cfg.Schedule.Total == 0 {
		t.cfg.Schedule.Total = steps
	}
	save := func(c cursor) error {
		if ckpt == "" {
			return nil
		}
		if err := os.MkdirAll(o.CheckpointDir, 0o755); err != nil {
			return fmt.Errorf("checkpoint directory: %w", err)
		}
		return t.SaveCheckpoint(ckpt, c)
	}

	// A budget the largest micro-batches of any epoch do not fit fails
	// now, not hours in.
	for epoch := at.Epoch; epoch < o.Epochs; epoch++ {
		for _, mb := range largestBatches(t, splits[epoch]) {
			if err := t.CheckMemory(mb); err != nil {
				return RunResult{}, fmt.Errorf("the largest micro-batch of epoch %d: %w", epoch+1, err)
			}
		}
	}

	var res RunResult
	start := time.Now()
	var doneTokens int64
	for epoch := at.Epoch; epoch < o.Epochs; epoch++ {
		batches := splits[epoch]
		used := 0 // sequences of the epoch the steps before b trained on
		if epoch == at.Epoch {
			used = at.Seqs
		}
		for b := 0; b < len(batches) && t.step < steps; b += o.Accumulate {
			var loss, targets float64
			tokens := 0
			metrics := map[string]float64{}
			end := min(b+o.Accumulate, len(batches))
			// A step abandoned midway has drawn dropout masks for its
			// earlier micro-batches: its checkpoint keeps the generator
			// as it was before the step, as an uninterrupted run has it.
			rng, err := t.pcg.MarshalBinary()
			if err != nil {
				return res, err
			}
			abandon := func() error {
				t.ZeroGrad()
				return t.pcg.UnmarshalBinary(rng)
			}
			for _, mb := range batches[b:end] {
				if err := ctx.Err(); err != nil {
					if aerr := abandon(); aerr != nil {
						return res, aerr
					}
					if err := save(cursor{Epoch: epoch, Seqs: used}); err != nil {
						return res, fmt.Errorf("%w; the checkpoint failed too: %v", ErrInterrupted, err)
					}
					if ckpt == "" {
						return res, fmt.Errorf("%w at step %d (no checkpoint directory)", ErrInterrupted, t.step)
					}
					return res, fmt.Errorf("%w at step %d: checkpoint %s", ErrInterrupted, t.step, ckpt)
				}
				r, err := t.Accumulate(mb, o.Loss)
				if err != nil {
					if aerr := abandon(); aerr != nil {
						return res, errors.Join(err, aerr)
					}
					err = fmt.Errorf("epoch %d, micro-batch %d: %w", epoch+1, b+1, err)
					// The steps taken so far are kept for a run resumed
					// with other settings.
					if ckpt != "" && res.Steps > 0 {
						if serr := save(cursor{Epoch: epoch, Seqs: used}); serr != nil {
							return res, fmt.Errorf("%w; the checkpoint failed too: %v", err, serr)
						}
						return res, fmt.Errorf("%w; the %d steps before it are in the checkpoint %s, to continue with other settings", err, t.step, ckpt)
					}
					return res, err
				}
				loss += r.Loss * r.Targets
				targets += r.Targets
				tokens += r.Tokens
				for k, v := range r.Metrics {
					metrics[k] += v * r.Targets
				}
			}
			st, err := t.Step()
			if err != nil {
				return res, err
			}
			loss /= targets
			for k := range metrics {
				metrics[k] /= targets
			}
			for _, mb := range batches[b:end] {
				used += len(mb)
			}
			doneTokens += int64(tokens)
			res.Steps++
			if res.Steps == 1 {
				res.FirstLoss = loss
			}
			res.LastLoss = loss
			elapsed := time.Since(start)
			tps := float64(doneTokens) / elapsed.Seconds()
			if o.Progress != nil {
				eta := elapsed / time.Duration(res.Steps) * time.Duration(steps-t.step)
				o.Progress(Progress{Step: t.step, Steps: steps, Epoch: epoch + 1, Loss: loss, LR: st.LR, GradNorm: st.GradNorm,
					Tokens: tokens, TokensPS: tps, Elapsed: elapsed, ETA: eta, Metrics: metrics, ActMemory: t.ActivationBytes()})
			}
			if o.CheckpointEvery > 0 && t.step%o.CheckpointEvery == 0 {
				next := cursor{Epoch: epoch, Seqs: used}
				if end >= len(batches) {
					next = cursor{Epoch: epoch + 1}
				}
				if err := save(next); err != nil {
					return res, err
				}
			}
		}
	}
	res.Tokens = doneTokens
	res.TokensPS = float64(doneTokens) / time.Since(start).Seconds()
	return res, nil
}
