package train

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"

	"github.com/agentrl/agentrl/llm/gguf"
)

// SaveAdapter writes the LoRA adapter as a llama.cpp GGUF adapter:
// general.type "adapter", adapter.type "lora", adapter.lora.alpha, and
// for each adapted matrix "<name>.lora_a" [in, r] and "<name>.lora_b"
// [r, out] in F32. The file appears atomically.
func (t *Trainer) SaveAdapter(path string) error {
	if t.cfg.Full {
		return errors.New("save adapter: the trainer trains every weight; save a model instead")
	}
	return t.writeAdapter(path, t.net.params, nil)
}

// writeAdapter writes params (LoRA pairs in order) with values, or the
// params' own values when values is nil.
func (t *Trainer) writeAdapter(path string, params []*param, values [][]float32) error {
	w := gguf.NewWriter()
	w.Set("general.architecture", t.h.Arch)
	w.Set("general.type", "adapter")
	w.Set("general.name", "agentrl LoRA")
	w.Set("adapter.type", "lora")
	w.Set("adapter.lora.alpha", t.cfg.LoRA.Alpha)
	for i, p := range params {
		v := p.value
		if values != nil {
			v = values[i]
		}
		raw, err := gguf.EncodeFloat32(gguf.TensorF32, p.toFile(v))
		if err != nil {
			return err
		}
		w.AddTensor(p.name, gguf.TensorF32, p.fileShape(), raw)
	}
	if _, err := w.WriteFile(path); err != nil {
		return fmt.Errorf("save adapter %s: %w", path, err)
	}
	return nil
}

// LoadAdapter sets the trainer's LoRA matrices from a GGUF adapter, e.g.
// to continue training it. The adapter must have been made for this model
// with the trainer's rank, alpha and targets.
func (t *Trainer) LoadAdapter(path string) error {
	values, err := t.readAdapter(path)
	if err != nil {
		return err
	}
	for i, p := range t.net.params {
		p.fromFile(p.value, values[i])
	}
	t.net.uploadParams()
	return nil
}

// readAdapter reads a GGUF adapter made for this trainer's model, rank,
// alpha and targets: the values of its parameters in file layout.
func (t *Trainer) readAdapter(path string) ([][]float32, error) {
	if t.cfg.Full {
		return nil, errors.New("load adapter: the trainer trains every weight, not an adapter")
	}
	f, err := openGGUF(path, "adapter")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("adapter %s: %s", path, fmt.Sprintf(format, args...))
	}
	if typ, _ := f.GetString("adapter.type"); typ != "lora" {
		return nil, fail("adapter.type is %q, want lora", typ)
	}
	if arch := f.Architecture(); arch != t.h.Arch {
		return nil, fail("made for architecture %q, the model is %s", arch, t.h.Arch)
	}
	if alpha, err := f.GetFloat32("adapter.lora.alpha"); err != nil || alpha != t.cfg.LoRA.Alpha {
		return nil, fail("LoRA alpha %v differs from the trainer's %g", alpha, t.cfg.LoRA.Alpha)
	}
	values, err := readParams(f, t.net.params, "")
	if err != nil {
		return nil, fail("%v", err)
	}
	if len(f.Tensors) != len(t.net.params) {
		return nil, fail("%d tensors, the trainer's targets %v make %d (another rank or target set?)", len(f.Tensors), t.cfg.LoRA.Targets, len(t.net.params))
	}
	return values, nil
}

// openGGUF opens a GGUF file that must be of the given general.type.
func openGGUF(path, typ string) (*gguf.File, error) {
	f, err := gguf.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s %s: no such file", typ, path)
		}
		return nil, fmt.Errorf("%s %s: %w", typ, path, err)
	}
	if got, _ := f.GetString("general.type"); got != typ {
		f.Close()
		return nil, fmt.Errorf("%s %s: the file is a GGUF %q, not %s", typ, path, got, typ)
	}
	return f, nil
}

// readParams reads the F32 tensors "<param name><suffix>" of f with the
// parameters' shapes, all finite.
func readParams(f *gguf.File, params []*param, suffix string) ([][]float32, error) {
	values := make([][]float32, len(params))
	for i, p := range params {
		name := p.name + suffix
		info, ok := f.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("tensor %s is missing", name)
		}
		if info.Type != gguf.TensorF32 || !slices.Equal(info.Shape, p.fileShape()) {
			return nil, fmt.Errorf("tensor %s is %s %v, want f32 %v", name, info.Type, info.Shape, p.fileShape())
		}
		v, err := f.TensorFloat32(name)
		if err != nil {
			return nil, err
		}
		for k, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("tensor %s: element %d is %g", name, k, x)
			}
		}
		values[i] = v
	}
	return values, nil
}

// SaveModel writes the trained model as a complete GGUF model that
// llama.cpp loads: the base model's metadata and tensors, with every
// trained weight in F32 (general.file_type 0). In LoRA mode the adapter is
// merged into the weights: W + (alpha/r) B A. The file appears
// atomically.
func (t *Trainer) SaveModel(path string) error {
	values := map[string][]float32{}
	if t.cfg.Full {
		for _, p := range t.net.params {
			values[p.name] = p.value
		}
	} else {
		merged, err := t.mergedWeights()
		if err != nil {
			return err
		}
		values = merged
	}
	src, err := gguf.Open(t.path)
	if err != nil {
		return fmt.Errorf("save model: reopen the base model: %w", err)
	}
	defer src.Close()
	w := gguf.NewWriter()
	for _, kv := range t.metadata {
		switch kv.Key {
		case "general.file_type":
			w.Set(kv.Key, uint32(0))
		case gguf.KeyAlignment:
			// The writer's default alignment serves.
		default:
			w.Set(kv.Key, kv.Value)
		}
	}
	for _, name := range t.order {
		info, _ := src.Tensor(name)
		if v, ok := values[name]; ok {
			raw, err := gguf.EncodeFloat32(gguf.TensorF32, v)
			if err != nil {
				return err
			}
			w.AddTensor(name, gguf.TensorF32, info.Shape, raw)
			continue
		}
		raw, err := src.TensorData(name)
		if err != nil {
			return fmt.Errorf("save model: %w", err)
		}
		w.AddTensor(name, info.Type, info.Shape, raw)
	}
	if _, err := w.WriteFile(path); err != nil {
		return fmt.Errorf("save model %s: %w", path, err)
	}
	return nil
}

// mergedWeights returns, for every adapted matrix, W + scale * B A in F32
// (ggml layout [in, out]: element (i, o) at i + in*o).
func (t *Trainer) mergedWeights() (map[string][]float32, error) {
	src, err := gguf.Open(t.path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	out := map[string][]float32{}
	for _, l := range t.net.linears() {
		if l.lora == nil {
			continue
		}
		w, err := baseFloat32(src, l.name)
		if err != nil {
			return nil, fmt.Errorf("merge %s: %w", l.name, err)
		}
		a, b, r := l.lora.a.value, l.lora.b.value, int(l.lora.a.shape[1])
		for o := range l.out {
			for k := range r {
				c := l.lora.scale * b[k+r*o]
				if c == 0 {
					continue
				}
				row := w[l.in*o : l.in*(o+1)]
				for i := range row {
					row[i] += c * a[i+l.in*k]
				}
			}
		}
		out[l.name] = w
	}
	return out, nil
}

// EMA is an exponential moving average of the trained parameters of one
// adapter (or of every weight in full mode): the target networks of
// actor-critic methods.
type EMA struct {
	t       *Trainer
	adapter string // "" in full mode
	values  [][]float32
}

// NewEMA starts an average at the current parameters of the active
// adapter, which it follows from then on, active or not.
func (t *Trainer) NewEMA() *EMA {
	e := &EMA{t: t, adapter: t.active, values: make([][]float32, len(t.net.params))}
	for i, p := range t.net.params {
		e.values[i] = append([]float32(nil), p.value...)
	}
	return e
}

// Update moves the average towards the adapter's current parameters by
// tau: avg = (1 - tau) avg + tau p.
func (e *EMA) Update(tau float64) error {
	if !(tau >= 0 && tau <= 1) {
		return fmt.Errorf("EMA rate %g must be in [0, 1]", tau)
	}
	for i, p := range e.t.net.params {
		current := p.value
		if e.adapter != "" {
			// An adapter's value slices are its parameters' whether it is
			// active or not (UseAdapter swaps the slices, never copies).
			current = e.t.adapters[e.adapter].value[i]
		}
		avg := e.values[i]
		for k, v := range current {
			avg[k] = float32((1-tau)*float64(avg[k]) + tau*float64(v))
		}
	}
	return nil
}

// LoadAdapter sets the average from a GGUF adapter written by SaveAdapter,
// e.g. to resume a run with its target network.
func (e *EMA) LoadAdapter(path string) error {
	values, err := e.t.readAdapter(path)
	if err != nil {
		return err
	}
	for i, p := range e.t.net.params {
		p.fromFile(e.values[i], values[i])
	}
	return nil
}

// SaveAdapter writes the average as a GGUF LoRA adapter.
func (e *EMA) SaveAdapter(path string) error {
	if e.t.cfg.Full {
		return errors.New("save EMA adapter: the trainer trains every weight")
	}
	return e.t.writeAdapter(path, e.t.net.params, e.values)
}
