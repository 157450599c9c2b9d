package rl

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/initmodel"
	"github.com/agentrl/agentrl/llm/initmodel/initmodeltest"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rollout"
	"github.com/agentrl/agentrl/rollout/rollouttest"
)

// tinyModel writes a made model for the test and returns its path.
func tinyModel(t *testing.T) string {
	return initmodeltest.Write(t, initmodel.Config{Preset: "tiny", Seed: 5})
}

// sampleEpisodes plays group rollouts of the guessing game with the model
// (and adapter, if any) at temperature 1.
func sampleEpisodes(t *testing.T, m *llm.Model, adapter *llm.Adapter, tasks, group int) []rollout.Trajectory {
	t.Helper()
	e, err := m.NewEngine(llm.EngineOptions{Parallel: 8, Context: 1024, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := rollout.DefaultActionSampling()
	s.MaxTokens, s.Seed = 12, 7
	p := &rollout.LLMPolicy{Engine: e, Sampling: s}
	if adapter != nil {
		p.Adapters = []llm.AdapterScale{{Adapter: adapter, Scale: 1}}
	}
	defer p.Close()
	trajs, err := rollout.Run(context.Background(), rollout.Config{
		NewEnv: func() envs.Env { return rollouttest.New() }, Parallel: 8, Episodes: tasks * group, Group: group,
		Split: envs.Train, MaxSteps: 4,
	}, p)
	if err != nil {
		t.Fatal(err)
	}
	return trajs
}

// TestEpisodeSequencesReproduceSamplingLogProbs is the contract between
// rollouts and training: trajectories become trainer sequences without
// tokenising, and the trainer's log-probabilities of the action tokens
// equal the ones the engine sampled them with, before and after an update
// of the adapter handed to the engine.
func TestEpisodeSequencesReproduceSamplingLogProbs(t *testing.T) {
	path := tinyModel(t)
	m, err := llm.Load(path, llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tr, err := train.New(path, train.Config{Threads: 1, F16KV: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	check := func(name string, trajs []rollout.Trajectory) {
		t.Helper()
		var seqs []ActionSequence
		steps := 0
		for i := range trajs {
			s, err := EpisodeSequences(&trajs[i])
			if err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, s...)
			steps += len(trajs[i].Steps)
		}
		if len(seqs) < len(trajs) || len(seqs) > steps {
			t.Errorf("%s: %d episodes of %d steps became %d sequences", name, len(trajs), steps, len(seqs))
		}
		plain := make([]train.Sequence, len(seqs))
		for i := range seqs {
			plain[i] = seqs[i].Sequence
		}
		logp, err := tr.LogProbs(plain)
		if err != nil {
			t.Fatal(err)
		}
		worst, n := 0.0, 0
		for i, s := range seqs {
			for _, sp := range s.Actions {
				for k := sp.Start; k < sp.End; k++ {
					worst = math.Max(worst, math.Abs(float64(logp[i][k]-s.SampleLogProbs[k])))
					n++
				}
			}
		}
		t.Logf("%s: %d episodes, %d steps, %d sequences, %d action tokens: max |trainer - sampling| log-prob %.2g", name, len(trajs), steps, len(seqs), n, worst)
		if worst > 1e-4 {
			t.Errorf("%s: trainer and sampling log-probs differ by %g", name, worst)
		}
	}

	before := sampleEpisodes(t, m, nil, 3, 4)
	check("base", before)
	// A group plays one task with independent samples.
	if before[0].Seed != before[3].Seed || before[0].Sample != 0 || before[3].Sample != 3 {
		t.Fatalf("group layout: seeds %d,%d samples %d,%d", before[0].Seed, before[3].Seed, before[0].Sample, before[3].Sample)
	}
	distinct := map[string]bool{}
	for _, tj := range before[:4] {
		distinct[tj.Steps[0].Action] = true
	}
	if len(distinct) < 2 {
		t.Errorf("the 4 samples of one task all began with the same action %q", before[0].Steps[0].Action)
	}

	// One update, handed to the engine as an adapter file.
	seqs, err := EpisodeSequences(&before[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Accumulate([]train.Sequence{seqs[0].Sequence}, train.CrossEntropy{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(); err != nil {
		t.Fatal(err)
	}
	adapterPath := filepath.Join(t.TempDir(), "actor.gguf")
	if err := tr.SaveAdapter(adapterPath); err != nil {
		t.Fatal(err)
	}
	a, err := m.LoadAdapter(adapterPath)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	after := sampleEpisodes(t, m, a, 2, 2)
	check("after one update", after)
	if slices.EqualFunc(before[:len(after)], after, func(x, y rollout.Trajectory) bool { return x.Steps[0].Action == y.Steps[0].Action }) {
		t.Log("note: the updated adapter sampled the same first actions")
	}
}

// TestEpisodeSequencesLayout checks the layout on a hand-made episode:
// steps whose prompt continues the sequence share it, a cut prompt starts
// a new one, and weights, spans and sampling log-probs line up.
func TestEpisodeSequencesLayout(t *testing.T) {
	tj := &rollout.Trajectory{Env: "hand", Seed: 1, Steps: []rollout.Step{
		{PromptTokenIDs: []int32{1, 2, 3}, TokenIDs: []int32{4, 5}, LogProbs: []float32{-0.4, -0.5}},
		{PromptTokenIDs: []int32{1, 2, 3, 4, 5, 6, 7}, TokenIDs: []int32{8}, LogProbs: []float32{-0.8}},
		// History cut: the prompt no longer begins with the sequence.
		{PromptTokenIDs: []int32{1, 2, 9}, TokenIDs: []int32{10, 11}, LogProbs: []float32{-1.0, -1.1}, DroppedMessages: 2},
	}}
	seqs, err := EpisodeSequences(tj)
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 2 {
		t.Fatalf("want 2 sequences, got %d", len(seqs))
	}
	first := seqs[0]
	if !slices.Equal(first.Tokens, []int32{1, 2, 3, 4, 5, 6, 7, 8}) ||
		!slices.Equal(first.Weights, []float32{0, 0, 0, 1, 1, 0, 0, 1}) ||
		!slices.Equal(first.SampleLogProbs, []float32{0, 0, 0, -0.4, -0.5, 0, 0, -0.8}) {
		t.Fatalf("first sequence %+v", first)
	}
	if !slices.Equal(first.Actions, []ActionSpan{{Step: 0, Start: 3, End: 5}, {Step: 1, Start: 7, End: 8}}) {
		t.Fatalf("spans %+v", first.Actions)
	}
	if !slices.Equal(seqs[1].Tokens, []int32{1, 2, 9, 10, 11}) || !slices.Equal(seqs[1].Actions, []ActionSpan{{Step: 2, Start: 3, End: 5}}) {
		t.Fatalf("second sequence %+v", seqs[1])
	}
	adv, err := first.StepValues([]float64{0.5, -1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(adv, []float32{0, 0, 0, 0.5, 0.5, 0, 0, -1}) {
		t.Fatalf("step values %v", adv)
	}
	if _, err := first.StepValues([]float64{1}); err == nil {
		t.Fatal("want an error for too few step values")
	}
	tj.Steps[1].PromptTokenIDs = nil
	if _, err := EpisodeSequences(tj); err == nil {
		t.Fatal("want an error for a step without prompt tokens")
	}
}

// TestGenerateSamplesPromptsIndependently: the collector's completions of
// the same prompt, asked twice in one call, are independent draws (a
// batch of alike prompts must not make the same choices), and the call is
// reproducible with its seed.
func TestGenerateSamplesPromptsIndependently(t *testing.T) {
	path := tinyModel(t)
	m, err := llm.Load(path, llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := m.NewEngine(llm.EngineOptions{Parallel: 4, Context: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	prompt, err := m.Tokenize("Guess the number.", true, true)
	if err != nil {
		t.Fatal(err)
	}
	c := &LocalCollector{Engine: e}
	s := llm.DefaultSampling()
	s.MaxTokens, s.Seed = 16, 3
	generate := func() []string {
		res, err := c.Generate(context.Background(), Snapshot{Model: path, Sampling: s}, [][]int32{prompt, prompt, prompt}, 1)
		if err != nil {
			t.Fatal(err)
		}
		texts := make([]string, len(res))
		for i, r := range res {
			texts[i] = r[0].Text
		}
		return texts
	}
	first := generate()
	if first[0] == first[1] && first[1] == first[2] {
		t.Errorf("three prompts alike sampled the same text %q: one random stream for all", first[0])
	}
	if again := generate(); !slices.Equal(again, first) {
		t.Errorf("the same call with the same seed sampled %q, then %q", first, again)
	}
}
