package rl

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
)

// fineTuneSaveEvery is how often a fine-tuning in progress checkpoints
// itself. A supervised phase (the SFT baseline's epoch, a warm start,
// NLAC's critic warm-up) can take most of an hour on a small machine, and
// a stop would otherwise lose all of it; a checkpoint costs a second.
var fineTuneSaveEvery = 5 * time.Minute

// fineTuneProgress is a fine-tuning in progress: what it trains on and
// how far it got. A resumed run continues it only when every field but
// the tallies matches, so it never mixes the steps of two fine-tunings.
type fineTuneProgress struct {
	What      string    `json:"what"`
	Iteration int       `json:"iteration"`
	Config    SFTConfig `json:"config"`
	// Data is a digest of the sequences' tokens and weights: data
	// collected again after a stop must be the same to go on with it.
	Data string `json:"data"`
	// What else shapes the weights: the base model (its architecture,
	// parameters and file size, which tell a quantisation from another;
	// not its path, which may move), the run's seed (the adapters'
	// initialisation, the shuffles) and the adapters' form. A run started
	// anew in the directory with another of them (a sweep whose model
	// changed) does not take the checkpoint up.
	Model string  `json:"model"`
	Seed  uint64  `json:"seed"`
	Rank  int     `json:"rank"`
	Alpha float64 `json:"alpha"`
	F16   bool    `json:"f16_base"`

	Steps        int     `json:"steps"`
	Tokens       int     `json:"tokens"`
	LossSum      float64 `json:"loss_sum"`
	TrainSeconds float64 `json:"train_seconds"`
}

// fineTuneFile, in the run directory, holds the progress checkpoint; the
// iteration's commit removes it.
var fineTuneFile = filepath.Join("checkpoints", "fine-tune.ckpt")

// FineTune trains the active adapter on demos for s.Epochs epochs at
// s.LR, one optimiser step per s.BatchTokens tokens, and records the mean
// loss in the iteration's metrics; its progress lines begin with what.
// It checkpoints itself every few minutes and after its last step, and a
// run resumed after a stop continues from there, with the same steps
// and losses as if it had not stopped.
func (r *Run) FineTune(ctx context.Context, what string, demos []train.Sequence, s SFTConfig, it int) error {
	if len(demos) == 0 {
		return fmt.Errorf("%s: no sequences to train on", what)
	}
	if err := r.Trainer.SetLR(s.LR); err != nil {
		return err
	}
	// Minibatches deals the sequences into at most one group each.
	perEpoch := max(1, min(totalTokens(demos)/s.BatchTokens, len(demos)))
	total := s.Epochs * perEpoch
	l := r.Config.LoRA
	p := r.resumeFineTune(fineTuneProgress{What: what, Iteration: it, Config: s, Data: digest(demos),
		Model: modelIdentity(r.model.Info()), Seed: r.Config.Seed, Rank: l.Rank, Alpha: l.Alpha, F16: l.F16Base})
	done, doneTokens, savedSteps := p.Steps, p.Tokens, p.Steps
	start, saved, logged := time.Now(), time.Now(), time.Now()
	save := func() error {
		saved, savedSteps = time.Now(), p.Steps
		return r.saveFineTune(p, time.Since(start).Seconds())
	}
	// A stop keeps the steps taken since the last checkpoint.
	stop := func(err error) error {
		if p.Steps > savedSteps {
			if serr := save(); serr != nil {
				r.logf("%s: checkpoint at the stop: %v", what, serr)
			}
		}
		return err
	}
	step := 0
	r.fineTuning = true
	defer func() { r.fineTuning = false }()
	for epoch := range s.Epochs {
		for _, mb := range r.Minibatches(it, epoch, len(demos), perEpoch) {
			if step++; step <= done {
				continue
			}
			if err := ctx.Err(); err != nil {
				return stop(err)
			}
			res, err := r.Update(demos, r.MicroBatches(demos, mb), func([]int) train.Loss { return train.CrossEntropy{} })
			if err != nil {
				return stop(err)
			}
			p.LossSum += res.Loss
			p.Steps++
			p.Tokens += res.Tokens
			if step == total || time.Since(saved) >= fineTuneSaveEvery {
				if err := save(); err != nil {
					return err
				}
			}
			// A long fine-tuning says how it goes every half minute.
			if time.Since(logged) > 30*time.Second {
				logged = time.Now()
				el := time.Since(start).Seconds()
				r.logf("%s: step %d/%d, loss %.4f, %.0f tok/s, ETA %s", what, step, total, res.Loss,
					float64(p.Tokens-doneTokens)/el, round(el/float64(step-done)*float64(total-step)))
			}
		}
	}
	r.metrics.Loss = p.LossSum / float64(max(p.Steps, 1))
	r.metrics.Losses["sft"] = r.metrics.Loss
	r.metrics.PhaseSeconds["train"] += p.TrainSeconds
	secs := r.endPhase("train") + p.TrainSeconds
	r.logf("%s: %d sequences, %d epochs, %d steps in %s, loss %.4f", what, len(demos), s.Epochs, p.Steps, round(secs), r.metrics.Loss)
	return nil
}

// resumeFineTune returns the progress to continue from: that of the
// checkpoint when it is of this fine-tuning (the trainer's active adapter
// and optimiser then restored from it, and the run's counters advanced by
// its steps), a fresh start otherwise.
func (r *Run) resumeFineTune(fresh fineTuneProgress) fineTuneProgress {
	path := filepath.Join(r.Dir, fineTuneFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fresh
	}
	var p fineTuneProgress
	if err := train.ReadCheckpointExtra(path, &p); err != nil {
		r.logf("%s: the fine-tuning checkpoint cannot be read (%v); starting over", fresh.What, err)
		return fresh
	}
	mine := fresh
	mine.Steps, mine.Tokens, mine.LossSum, mine.TrainSeconds = p.Steps, p.Tokens, p.LossSum, p.TrainSeconds
	if p != mine {
		r.logf("%s: the fine-tuning checkpoint is of other data or settings (%s of iteration %d); starting over", fresh.What, p.What, p.Iteration)
		return fresh
	}
	if err := r.Trainer.LoadCheckpoint(path, nil); err != nil {
		// Nothing changed in the trainer.
		r.logf("%s: the fine-tuning checkpoint cannot be loaded (%v); starting over", fresh.What, err)
		return fresh
	}
	r.State.GradSteps += int64(p.Steps)
	r.State.TrainTokens += int64(p.Tokens)
	// state.json was last written before this fine-tuning began (the
	// commit that follows it removes the checkpoint), so the run's wall
	// time lacks the training done before the stop: a run stopped within
	// its first iteration would otherwise count only its last process.
	r.wall0 += p.TrainSeconds
	r.logf("%s: continuing after step %d from its checkpoint", fresh.What, p.Steps)
	return p
}

// saveFineTune checkpoints the active adapter with the progress; the
// checkpoint replaces the previous one whole (a kill leaves that one).
func (r *Run) saveFineTune(p fineTuneProgress, secondsThisProcess float64) error {
	p.TrainSeconds += secondsThisProcess
	path := filepath.Join(r.Dir, fineTuneFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return r.Trainer.SaveCheckpoint(path, p)
}

// digest identifies a fine-tuning's data.
func digest(seqs []train.Sequence) string {
	h := sha256.New()
	for _, s := range seqs {
		binary.Write(h, binary.LittleEndian, int64(len(s.Tokens)))
		binary.Write(h, binary.LittleEndian, s.Tokens)
		binary.Write(h, binary.LittleEndian, int64(len(s.Weights)))
		binary.Write(h, binary.LittleEndian, s.Weights)
		binary.Write(h, binary.LittleEndian, int64(len(s.Targets)))
		binary.Write(h, binary.LittleEndian, s.Targets)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func totalTokens(seqs []train.Sequence) int {
	n := 0
	for _, s := range seqs {
		n += len(s.Tokens)
	}
	return n
}

// modelIdentity tells base models apart for a fine-tuning checkpoint.
func modelIdentity(i llm.Info) string {
	return fmt.Sprintf("%s, %d parameters, %d bytes", i.Architecture, i.Parameters, i.SizeBytes)
}
