package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm/gguf"
)

// withTensorType rewrites a model with one tensor stored as another type
// (zero data of the right size).
func withTensorType(t *testing.T, src, tensor string, typ gguf.TensorType) string {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.Metadata {
		w.Set(kv.Key, kv.Value)
	}
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if ti.Name == tensor {
			n := ti.Elements() / typ.BlockSize() * typ.BlockBytes()
			w.AddTensor(ti.Name, typ, ti.Shape, make([]byte, n))
			continue
		}
		w.AddTensor(ti.Name, ti.Type, ti.Shape, data)
	}
	dst := filepath.Join(t.TempDir(), "model.gguf")
	if _, err := w.WriteFile(dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestModelErrors(t *testing.T) {
	micro := makeModel(t, "micro", microConfig(5))
	garbage := filepath.Join(t.TempDir(), "garbage.gguf")
	if err := os.WriteFile(garbage, []byte("GGUF but not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		path string
		cfg  Config
		want string
	}{
		"missing file":       {filepath.Join(t.TempDir(), "none.gguf"), Config{}, "no such file"},
		"not a model":        {garbage, Config{}, "model"},
		"architecture":       {convertArch(t, micro, "gpt2"), Config{}, `unsupported architecture "gpt2"`},
		"weight type":        {withTensorType(t, micro, "blk.1.ffn_up.weight", gguf.TensorQ8_1), Config{}, "unsupported weight type q8_1"},
		"full on quantised":  {quantizeModel(t, micro, "q4_0"), Config{Full: true}, "full-parameter training needs F32, F16 or BF16 weights"},
		"rank":               {micro, Config{LoRA: LoRAConfig{Rank: -1}}, "LoRA rank"},
		"target":             {micro, Config{LoRA: LoRAConfig{Targets: []string{"q", "lm_head"}}}, `unknown LoRA target "lm_head"`},
		"dropout":            {micro, Config{LoRA: LoRAConfig{Dropout: 1}}, "dropout"},
		"learning rate":      {micro, Config{Optimizer: AdamW{LR: -1}}, "learning rate"},
		"schedule":           {micro, Config{Schedule: Schedule{Decay: "step"}}, "decay"},
		"context over model": {micro, Config{Context: 4096}, "exceeds the model's training context"},
	} {
		tr, err := New(tc.path, tc.cfg)
		if err == nil {
			tr.Close()
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q, want one containing %q", name, err, tc.want)
		}
	}
}

func TestBatchErrors(t *testing.T) {
	tr := newMicro(t, Config{Context: 64})
	long := make([]int32, 65)
	nan := float32(math.NaN())
	for name, tc := range map[string]struct {
		seqs []Sequence
		want string
	}{
		"empty batch":  {nil, "empty batch"},
		"one token":    {[]Sequence{{Tokens: []int32{1}}}, "at least 2"},
		"too long":     {[]Sequence{{Tokens: long}}, "65 tokens exceed the context of 64"},
		"vocabulary":   {[]Sequence{{Tokens: []int32{1, 300}}}, "outside the vocabulary"},
		"weight count": {[]Sequence{{Tokens: []int32{1, 2}, Weights: []float32{0}}}, "1 weights for 2 tokens"},
		"first weight": {[]Sequence{{Tokens: []int32{1, 2}, Weights: []float32{1, 1}}}, "first token has weight"},
		"nan weight":   {[]Sequence{{Tokens: []int32{1, 2}, Weights: []float32{0, nan}}}, "weight NaN"},
		"no target":    {[]Sequence{{Tokens: []int32{1, 2}, Weights: []float32{0, 0}}}, "no token of the batch"},
	} {
		_, err := tr.Accumulate(tc.seqs, CrossEntropy{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
	if _, err := tr.Step(); err == nil {
		t.Error("a step with nothing accumulated succeeded")
	}
}

func TestAdapterErrors(t *testing.T) {
	tr := newMicro(t, Config{LoRA: LoRAConfig{Rank: 4}})
	dir := t.TempDir()
	good := filepath.Join(dir, "adapter.gguf")
	if err := tr.SaveAdapter(good); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.gguf")
	if err := os.WriteFile(corrupt, raw[:len(raw)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	qwen, err := New(convertArch(t, makeModel(t, "micro", microConfig(5)), "qwen2"), Config{Threads: 1, LoRA: LoRAConfig{Rank: 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer qwen.Close()
	otherArch := filepath.Join(dir, "qwen2.gguf")
	if err := qwen.SaveAdapter(otherArch); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		tr   *Trainer
		path string
		want string
	}{
		"corrupt":      {tr, corrupt, "truncated"},
		"architecture": {tr, otherArch, `made for architecture "qwen2"`},
		"rank":         {newMicro(t, Config{LoRA: LoRAConfig{Rank: 8, Alpha: 8}}), good, "lora_a is f32 [64 4], want f32 [64 8]"},
		"alpha":        {newMicro(t, Config{LoRA: LoRAConfig{Rank: 4, Alpha: 4}}), good, "alpha"},
		"targets":      {newMicro(t, Config{LoRA: LoRAConfig{Rank: 4, Targets: []string{"q", "v"}}}), good, "tensors"},
		"full mode":    {newMicro(t, Config{Full: true}), good, "every weight"},
		"a model":      {tr, makeModel(t, "micro", microConfig(5)), "not adapter"},
	} {
		before := append([]float32(nil), tc.tr.net.params[0].value...)
		err := tc.tr.LoadAdapter(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
		for i, v := range tc.tr.net.params[0].value {
			if v != before[i] {
				t.Fatalf("%s: a failed load changed the parameters", name)
			}
		}
	}
}

func TestMemoryBudget(t *testing.T) {
	seqs := testSequences(300, 2)
	tight := newMicro(t, Config{MemoryBudget: 1 << 16})
	if _, err := tight.Accumulate(seqs, CrossEntropy{}); err == nil || !strings.Contains(err.Error(), "over the budget of 0.1 MiB") ||
		!strings.Contains(err.Error(), "with gradient checkpointing") {
		t.Errorf("64 KiB budget: %v", err)
	}
	roomy := newMicro(t, Config{MemoryBudget: 1 << 30})
	if _, err := roomy.Accumulate(seqs, CrossEntropy{}); err != nil {
		t.Fatal(err)
	}
	if n := roomy.ActivationBytes(); n <= 1<<16 || n > 1<<30 {
		t.Errorf("activation memory %d bytes", n)
	}
	if roomy.Checkpointed() != 0 {
		t.Error("a micro-batch within the budget was checkpointed")
	}
}

// TestGradientCheckpointing checks that recomputing the activations in
// the backward pass gives the gradients of keeping them to the bit,
// dropout included, in less memory, and that a memory budget switches it
// on.
func TestGradientCheckpointing(t *testing.T) {
	cfg := microConfig(8)
	cfg.BlockCount = 6
	path := makeModel(t, "micro6", cfg)
	rng := rand.New(rand.NewPCG(4, 4))
	seqs := make([]Sequence, 2)
	for i := range seqs {
		seqs[i].Tokens = make([]int32, 120)
		for k := range seqs[i].Tokens {
			seqs[i].Tokens[k] = int32(rng.IntN(300))
		}
	}
	trainer := func(c Config) *Trainer {
		c.Threads, c.Seed, c.LoRA = 1, 3, LoRAConfig{Rank: 4, Dropout: 0.2}
		tr, err := New(path, c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.Close)
		tr.net.attnBlock = 32 // recomputing blocks of attention too
		perturb(tr, 0.05, 9)
		return tr
	}
	kept := trainer(Config{Checkpointing: "off"})
	rk, gk := gradients(t, kept, seqs, CrossEntropy{})
	recomputed := trainer(Config{Checkpointing: "on"})
	rr, gr := gradients(t, recomputed, seqs, CrossEntropy{})
	if rk.Loss != rr.Loss || maxGradDiff(gk, gr) != 0 {
		t.Fatalf("checkpointing changed the loss (%g vs %g) or the gradients (by %g)", rk.Loss, rr.Loss, maxGradDiff(gk, gr))
	}
	full, less := kept.ActivationBytes(), recomputed.ActivationBytes()
	t.Logf("activations of 2 x 120 tokens, 6 layers: %d bytes kept, %d with checkpointing", full, less)
	if less > full*6/10 {
		t.Errorf("checkpointing needs %d bytes of activations, keeping them %d", less, full)
	}

	budget := (full + less) / 2
	auto := trainer(Config{MemoryBudget: budget})
	// Checking the memory a micro-batch needs computes nothing: it is
	// not counted as a checkpointed micro-batch.
	if err := auto.CheckMemory(seqs); err != nil || auto.Checkpointed() != 0 {
		t.Errorf("CheckMemory under a budget between the two: %v, %d micro-batches counted as checkpointed, want none", err, auto.Checkpointed())
	}
	ra, ga := gradients(t, auto, seqs, CrossEntropy{})
	if auto.Checkpointed() != 1 || ra.Loss != rk.Loss || maxGradDiff(gk, ga) != 0 {
		t.Errorf("under a budget between the two: %d micro-batches checkpointed, loss %g (want %g)", auto.Checkpointed(), ra.Loss, rk.Loss)
	}
	off := trainer(Config{MemoryBudget: budget, Checkpointing: "off"})
	if _, err := off.Accumulate(seqs, CrossEntropy{}); err == nil || strings.Contains(err.Error(), "checkpointing") {
		t.Errorf("checkpointing off, over the budget: %v", err)
	}
	if _, err := New(path, Config{Checkpointing: "sometimes"}); err == nil || !strings.Contains(err.Error(), "want auto, on or off") {
		t.Errorf("bad checkpointing mode: %v", err)
	}
}

// TestRunRefusesAMicroBatchOverBudgetBeforeTraining: a run whose longest
// micro-batch cannot fit the memory budget fails before its first step,
// naming it, however late that micro-batch would have come.
func TestRunRefusesAMicroBatchOverBudgetBeforeTraining(t *testing.T) {
	var seqs []Sequence
	for i := range 4 {
		seqs = append(seqs, testSequences(300, uint64(60+i))...)
	}
	long := Sequence{Tokens: make([]int32, 120)}
	for i := range long.Tokens {
		long.Tokens[i] = int32(i % 300)
	}
	seqs = append(seqs, long)
	// Enough for the short sequences' micro-batches, not for the long one.
	probe := newMicro(t, Config{})
	if _, err := probe.Accumulate(seqs[:1], CrossEntropy{}); err != nil {
		t.Fatal(err)
	}
	budget := 2 * probe.ActivationBytes()
	tr := newMicro(t, Config{MemoryBudget: budget, Checkpointing: "off"})
	steps := 0
	_, err := Run(context.Background(), tr, seqs, RunOptions{BatchTokens: 30, Seed: 1, Progress: func(Progress) { steps++ }})
	if err == nil || !strings.Contains(err.Error(), "the largest micro-batch") || !strings.Contains(err.Error(), "over the budget") {
		t.Fatalf("want the longest micro-batch refused, got %v", err)
	}
	if steps != 0 {
		t.Fatalf("the run took %d steps before refusing", steps)
	}
}

// TestRunKeepsItsStepsWhenAMicroBatchFails: a micro-batch that fails
// midway through a run (here a token outside the vocabulary) leaves the
// steps before it in the checkpoint, from which a run can go on.
func TestRunKeepsItsStepsWhenAMicroBatchFails(t *testing.T) {
	var seqs []Sequence
	for i := range 4 {
		seqs = append(seqs, testSequences(300, uint64(70+i))...)
	}
	opts := RunOptions{BatchTokens: 30, Seed: 3, CheckpointDir: t.TempDir()}
	// Spoil a micro-batch after the second, other than the one the run
	// checks before it starts.
	batches := microBatches(seqs, opts.BatchTokens, opts.Seed, 0, 0)
	checked := func(b []Sequence) bool {
		return slices.ContainsFunc(largestBatches(newMicro(t, Config{}), batches), func(c []Sequence) bool { return &c[0].Tokens[0] == &b[0].Tokens[0] })
	}
	k := 2
	for k < len(batches) && checked(batches[k]) {
		k++
	}
	if k == len(batches) {
		t.Fatalf("%d micro-batches", len(batches))
	}
	bad := batches[k][0]
	bad.Tokens[len(bad.Tokens)-1] = 1000
	_, err := Run(context.Background(), newMicro(t, Config{}), seqs, opts)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("micro-batch %d:", k+1)) || !strings.Contains(err.Error(), "outside the vocabulary") ||
		!strings.Contains(err.Error(), fmt.Sprintf("the %d steps before it are in the checkpoint", k)) {
		t.Fatalf("want micro-batch %d's error and a checkpoint of %d steps, got %v", k+1, k, err)
	}
	var at cursor
	used := 0
	for _, mb := range batches[:k] {
		used += len(mb)
	}
	if err := newMicro(t, Config{}).LoadCheckpoint(filepath.Join(opts.CheckpointDir, CheckpointFile), &at); err != nil || at != (cursor{Epoch: 0, Seqs: used}) {
		t.Fatalf("checkpoint at %+v (%v), want the %d sequences of the first epoch's %d micro-batches before it", at, err, used, k)
	}
}
