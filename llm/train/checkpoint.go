package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/agentrl/agentrl/llm/gguf"
)

// A checkpoint is one GGUF file (general.type "agentrl-checkpoint") with
// everything needed to continue training as if it had not stopped: the
// parameters, their AdamW moments, the step count, the optimiser and
// schedule configuration, the dropout generator's state, and state the
// caller attaches (e.g. its position in the data). It is written to a
// temporary file renamed into place, so a crash leaves the previous
// checkpoint intact.
const checkpointType = "agentrl-checkpoint"

// checkpointState is the JSON metadata of a checkpoint.
type checkpointState struct {
	Step      int             `json:"step"`
	Full      bool            `json:"full"`
	LoRA      LoRAConfig      `json:"lora"`
	Optimizer AdamW           `json:"optimizer"`
	Schedule  Schedule        `json:"schedule"`
	RNG       []byte          `json:"rng"`
	Model     modelSignature  `json:"model"`
	Extra     json.RawMessage `json:"extra,omitempty"`
}

// modelSignature identifies the base model a checkpoint belongs to.
type modelSignature struct {
	Arch       string `json:"arch"`
	Vocab      int    `json:"vocab"`
	Embd       int    `json:"embd"`
	Layers     int    `json:"layers"`
	Parameters int64  `json:"parameters"`
}

func (t *Trainer) signature() modelSignature {
	return modelSignature{Arch: t.h.Arch, Vocab: t.h.Vocab, Embd: t.h.Embd, Layers: t.h.Layers, Parameters: t.ModelParameters()}
}

// SaveCheckpoint writes a checkpoint at an optimiser-step boundary; extra
// (any JSON value, or nil) comes back from LoadCheckpoint. The file at
// path is replaced whole (gguf.Writer.WriteFile), so a kill leaves the
// previous checkpoint.
func (t *Trainer) SaveCheckpoint(path string, extra any) error {
	if t.accum != 0 {
		return errors.New("checkpoint: gradients are accumulated but not applied; checkpoint after Step")
	}
	rng, err := t.pcg.MarshalBinary()
	if err != nil {
		return err
	}
	st := checkpointState{Step: t.step, Full: t.cfg.Full, LoRA: t.cfg.LoRA, Optimizer: t.cfg.Optimizer,
		Schedule: t.cfg.Schedule, RNG: rng, Model: t.signature()}
	if extra != nil {
		if st.Extra, err = json.Marshal(extra); err != nil {
			return fmt.Errorf("checkpoint: extra state: %w", err)
		}
	}
	meta, err := json.Marshal(st)
	if err != nil {
		return err
	}
	w := gguf.NewWriter()
	w.Set("general.type", checkpointType)
	w.Set("general.architecture", t.h.Arch)
	w.Set("agentrl.checkpoint", string(meta))
	for _, p := range t.net.params {
		for _, part := range []struct {
			suffix string
			values []float32
		}{{"", p.value}, {".adam_m", p.m}, {".adam_v", p.v}} {
			raw, err := gguf.EncodeFloat32(gguf.TensorF32, p.toFile(part.values))
			if err != nil {
				return err
			}
			w.AddTensor(p.name+part.suffix, gguf.TensorF32, p.fileShape(), raw)
		}
	}
	if _, err := w.WriteFile(path); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return nil
}

// LoadCheckpoint restores a checkpoint written by SaveCheckpoint for the
// same model and mode, replacing the trainer's parameters, moments, step,
// optimiser and schedule configuration and generator state. If extra is
// not nil, the caller's state is decoded into it. Nothing changes when it
// fails.
func (t *Trainer) LoadCheckpoint(path string, extra any) error {
	f, err := openGGUF(path, checkpointType)
	if err != nil {
		return err
	}
	defer f.Close()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("checkpoint %s: %s", path, fmt.Sprintf(format, args...))
	}
	st, err := readCheckpointState(f)
	if err != nil {
		return fail("%v", err)
	}
	if st.Model != t.signature() {
		return fail("made for model %+v, the trainer has %+v", st.Model, t.signature())
	}
	if st.Full != t.cfg.Full {
		return fail("full-parameter mode %v, the trainer's is %v", st.Full, t.cfg.Full)
	}
	if !st.Full && (st.LoRA.Rank != t.cfg.LoRA.Rank || st.LoRA.Alpha != t.cfg.LoRA.Alpha || !slices.Equal(st.LoRA.Targets, t.cfg.LoRA.Targets)) {
		return fail("LoRA rank %d, alpha %g on %v; the trainer has rank %d, alpha %g on %v",
			st.LoRA.Rank, st.LoRA.Alpha, st.LoRA.Targets, t.cfg.LoRA.Rank, t.cfg.LoRA.Alpha, t.cfg.LoRA.Targets)
	}
	if err := st.Optimizer.validate(); err != nil {
		return fail("%v", err)
	}
	if err := st.Schedule.validate(); err != nil {
		return fail("%v", err)
	}
	pcg := rand.NewPCG(0, 0)
	if err := pcg.UnmarshalBinary(st.RNG); err != nil {
		return fail("generator state: %v", err)
	}
	var values [3][][]float32
	for k, suffix := range []string{"", ".adam_m", ".adam_v"} {
		if values[k], err = readParams(f, t.net.params, suffix); err != nil {
			return fail("%v", err)
		}
	}
	if len(f.Tensors) != 3*len(t.net.params) {
		return fail("%d tensors, want %d", len(f.Tensors), 3*len(t.net.params))
	}
	if extra != nil && st.Extra != nil {
		if err := json.Unmarshal(st.Extra, extra); err != nil {
			return fail("extra state: %v", err)
		}
	}
	for i, p := range t.net.params {
		p.fromFile(p.value, values[0][i])
		p.fromFile(p.m, values[1][i])
		p.fromFile(p.v, values[2][i])
	}
	t.ZeroGrad()
	t.net.uploadParams()
	t.step = st.Step
	t.cfg.LoRA.Dropout = st.LoRA.Dropout
	t.cfg.Optimizer, t.cfg.Schedule = st.Optimizer, st.Schedule
	t.pcg = pcg
	t.rng = rand.New(pcg)
	return nil
}

// ReadCheckpointExtra decodes into extra the caller's state that
// SaveCheckpoint stored at path, without touching any trainer: a caller
// can check that a checkpoint is the one it wants before loading it.
func ReadCheckpointExtra(path string, extra any) error {
	f, err := openGGUF(path, checkpointType)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := readCheckpointState(f)
	if err == nil && st.Extra == nil {
		err = errors.New("no extra state")
	}
	if err == nil {
		err = json.Unmarshal(st.Extra, extra)
	}
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return nil
}

func readCheckpointState(f *gguf.File) (checkpointState, error) {
	var st checkpointState
	raw, err := f.GetString("agentrl.checkpoint")
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return st, fmt.Errorf("state: %w", err)
	}
	return st, nil
}
