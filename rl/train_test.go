package rl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/initmodel/initmodeltest"
	"github.com/agentrl/agentrl/llm/train"
	"gonum.org/v1/gonum/stat"
)

// letters is a one-step task a random model can learn: its reward is the
// share of the action's letters that are vowels. A language model with
// random weights writes varied text, so the episodes of a group differ and
// the policy gradient has something to follow.
type letters struct{ done bool }

func (l *letters) Spec() envs.Spec {
	return envs.Spec{Name: "letters", Instruction: "Write a word.", MaxSteps: 1, RewardMax: 1, Splits: envs.Splits}
}

func (l *letters) Reset(envs.Split, int64) (string, error) {
	l.done = false
	return "Say something.", nil
}

func (l *letters) Step(text string) (envs.StepResult, error) {
	vowels, all := 0, 0
	for _, c := range strings.ToLower(text) {
		if c >= 'a' && c <= 'z' {
			all++
			if strings.ContainsRune("aeiou", c) {
				vowels++
			}
		}
	}
	reward := 0.0
	if all > 0 {
		reward = float64(vowels) / float64(all)
	}
	return envs.StepResult{Observation: "ok", Reward: reward, Done: true,
		Info: envs.Info{ValidAction: true, Score: reward, Success: reward > 0.5}}, nil
}

func (l *letters) AvailableActions() []string { return nil }

// trainedMetrics trains a run of cfg in a temporary directory (or the one
// AGENTRL_KEEP_RUN names, to look at afterwards) and returns its metrics,
// one line per iteration.
func trainedMetrics(t *testing.T, cfg Config, model string, newEnv func() envs.Env) []Metrics {
	t.Helper()
	dir := t.TempDir()
	if d := os.Getenv("AGENTRL_KEEP_RUN"); d != "" {
		dir = d
	}
	if err := Train(context.Background(), cfg, Options{ModelPath: model, Dir: dir, NewEnv: newEnv, Progress: testLog{t}}); err != nil {
		t.Fatal(err)
	}
	ms := readMetrics(t, dir)
	if len(ms) != cfg.Iterations {
		t.Fatalf("%d metrics lines, want %d", len(ms), cfg.Iterations)
	}
	return ms
}

// readMetrics reads a run's metrics.jsonl.
func readMetrics(t *testing.T, dir string) []Metrics {
	t.Helper()
	ms, err := ReadMetrics(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// byteModel writes the byte model (initmodeltest.Bytes) the tests train.
func byteModel(t *testing.T) string { return initmodeltest.Bytes(t, 256) }

func lettersConfig(algorithm string, iterations int) Config {
	cfg := DefaultConfig()
	cfg.Algorithm, cfg.Env, cfg.Model, cfg.Iterations, cfg.Threads = algorithm, "letters", "tiny", iterations, 1
	cfg.Rollout = RolloutConfig{Tasks: 4, MaxTokens: 8, Temperature: 1, Parallel: 16, Context: 256}
	cfg.Eval = EvalConfig{Episodes: 0, Split: envs.Test}
	cfg.LoRA = LoRAConfig{Rank: 8, BatchTokens: 4096}
	cfg.WarmStart.Demos = 0
	cfg.GRPO.Group, cfg.GRPO.LR, cfg.GRPO.Minibatches, cfg.GRPO.Epochs = 8, 2e-2, 1, 2
	return cfg
}

// TestGRPORaisesReward trains the tiny model on the vowel task with GRPO
// and checks that the reward rises over the run. The rewards of single
// iterations are noisy (32 episodes each) and two builds of the binary can
// differ in the last bits of an update and send a run down its own path,
// so the test fits a line through all twenty iterations' rewards rather
// than comparing a few of them. Over six seeds the fitted gain over the run
// was 0.18-0.53 and the slope 3.1-14 standard errors above zero
// (docs/results/rl-core.md); twelve iterations were too few (one seed in
// twelve runs fell to 1.5 standard errors). A run that does not learn fits
// a gain near zero.
func TestGRPORaisesReward(t *testing.T) {
	const iterations = 20
	ms := trainedMetrics(t, lettersConfig("grpo", iterations), byteModel(t), func() envs.Env { return &letters{} })
	final := ms[iterations-1]
	var xs, rewards []float64
	for _, m := range ms {
		t.Logf("iter %d reward %.3f loss %.4f metrics %v", m.Iteration, m.Reward, m.Loss, m.Metrics)
		xs = append(xs, float64(m.Iteration))
		rewards = append(rewards, m.Reward)
	}
	gain, tStat := trend(xs, rewards)
	t.Logf("reward trend: %.3f gained over the run (slope %.1f standard errors above zero); grad steps %d, env steps %d", gain, tStat, final.GradSteps, final.EnvSteps)
	if gain < 0.1 || tStat < 2 {
		t.Fatalf("GRPO did not raise the reward: fitted gain %.3f over the run (want >= 0.1), slope %.1f standard errors (want >= 2)", gain, tStat)
	}
	if final.GradSteps != 2*iterations || final.EnvSteps != iterations*32 {
		t.Fatalf("counters: %d grad steps, %d env steps", final.GradSteps, final.EnvSteps)
	}
	// Each iteration plays before it updates: at the steps of the one before.
	for i, m := range ms {
		if want := 2 * i; m.Metrics[playedAtGradSteps] != float64(want) {
			t.Fatalf("iteration %d played at %v optimiser steps, want %d", m.Iteration, m.Metrics[playedAtGradSteps], want)
		}
	}
}

// trend fits a least-squares line through (x, y) and returns the rise it
// predicts from the first x to the last and the slope's t statistic (the
// slope over its standard error).
func trend(x, y []float64) (gain, tStat float64) {
	intercept, slope := stat.LinearRegression(x, y, nil, false)
	var residuals, spread float64
	meanX := stat.Mean(x, nil)
	for i := range x {
		r := y[i] - (intercept + slope*x[i])
		residuals += r * r
		spread += (x[i] - meanX) * (x[i] - meanX)
	}
	se := math.Sqrt(residuals/float64(len(x)-2)) / math.Sqrt(spread)
	return slope * (x[len(x)-1] - x[0]), slope / se
}

// testLog writes a run's progress lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// broken is an environment that always fails, like a remote server that
// has gone away.
type broken struct{ letters }

func (broken) Reset(envs.Split, int64) (string, error) {
	return "", errors.New("connection refused")
}

// TestRunStopsWhenEveryEpisodeFails: a failed episode is recorded and the
// run goes on, but a run whose every episode fails stops with the cause.
func TestRunStopsWhenEveryEpisodeFails(t *testing.T) {
	cfg := lettersConfig("grpo", 2)
	err := Train(context.Background(), cfg, Options{ModelPath: byteModel(t), Dir: t.TempDir(), NewEnv: func() envs.Env { return &broken{} }})
	if err == nil || !strings.Contains(err.Error(), "every one of 32 episodes failed") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("want an error saying every episode failed and why, got %v", err)
	}
}

// TestGPURunWithoutAGPUSaysSo: gpu: true where no GPU backend is
// registered is an error naming the way out, before anything is trained.
func TestGPURunWithoutAGPUSaysSo(t *testing.T) {
	if gpu := llm.GPU(); gpu != "" {
		t.Skipf("this machine has a GPU (%s)", gpu)
	}
	cfg := lettersConfig("grpo", 1)
	cfg.GPU = true
	dir := t.TempDir()
	err := Train(context.Background(), cfg, Options{ModelPath: byteModel(t), Dir: dir, NewEnv: func() envs.Env { return &letters{} }})
	if err == nil || !strings.Contains(err.Error(), "no GPU was found") || !strings.Contains(err.Error(), "gpu: false") {
		t.Fatalf("want an error saying no GPU was found and how to run on the CPU, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "metrics.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("metrics written by a run that could not start: %v", err)
	}
}

// TestStopLosesAtMostAnIteration stops a run (as Ctrl-C does) after its
// first iteration: Train returns the cancellation, and the state still
// names the last finished iteration, from which --resume goes on.
func TestStopLosesAtMostAnIteration(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Train(ctx, lettersConfig("grpo", 50), Options{ModelPath: byteModel(t), Dir: dir, NewEnv: func() envs.Env { return &letters{} }})
	}()
	for {
		if _, started, _ := readState(dir); started {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the run ended before it was stopped: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want the cancellation, got %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not stop within two minutes of the request")
	}
	st, _, err := readState(dir)
	if err != nil || st.Finished || st.Iteration < 1 || st.Iteration >= 50 {
		t.Fatalf("state after the stop: %+v, %v", st, err)
	}
	if n := len(readMetrics(t, dir)); n != st.Iteration {
		t.Fatalf("%d metrics lines for %d finished iterations", n, st.Iteration)
	}

	// Resumed with as many iterations as it has finished, it ends there:
	// its final evaluation, a finished state, its metrics as they were,
	// and its adapter that of its checkpoint, whatever a run killed in
	// its next commit left in adapters/ (here another file).
	adapterPath := filepath.Join(dir, "adapters", ActorAdapter+".gguf")
	want, err := os.ReadFile(adapterPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(adapterPath, []byte("the next iteration's adapter"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := lettersConfig("grpo", st.Iteration)
	cfg.Eval.Episodes = 2
	if err := Train(context.Background(), cfg, Options{ModelPath: byteModel(t), Dir: dir, NewEnv: func() envs.Env { return &letters{} }, Resume: true}); err != nil {
		t.Fatal(err)
	}
	end, _, err := readState(dir)
	if err != nil || !end.Finished || end.Iteration != st.Iteration || end.Iterations != st.Iteration {
		t.Fatalf("state after resuming with %d iterations: %+v, %v", st.Iteration, end, err)
	}
	if n := len(readMetrics(t, dir)); n != st.Iteration {
		t.Fatalf("%d metrics lines for %d finished iterations", n, st.Iteration)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "eval", "test.json")); err != nil || !strings.Contains(string(data), fmt.Sprintf(`"iteration": %d,`, st.Iteration)) {
		t.Fatalf("no final evaluation of iteration %d: %v\n%.300s", st.Iteration, err, data)
	}
	if got, err := os.ReadFile(adapterPath); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the actor adapter is not its checkpoint's (%d bytes, want %d): %v", len(got), len(want), err)
	}
}

// TestWarmStartReference: the warm-start reference policy gives the warm
// start's log-probabilities (not the base model's) when asked for after
// another adapter was used and updated (StepAgent-IRL asks after its
// discriminator's update), and again after the actor has moved on
// (StepAgent asks every cycle).
func TestWarmStartReference(t *testing.T) {
	model := byteModel(t)
	// A warm start that differs from the base model: a few steps on one
	// sequence.
	init := filepath.Join(t.TempDir(), "init.gguf")
	tr, err := train.New(model, train.Config{Threads: 1, LoRA: train.LoRAConfig{Rank: 8}, Seed: 42, Optimizer: train.AdamW{LR: 1e-2}})
	if err != nil {
		t.Fatal(err)
	}
	step := func(tr *train.Trainer, seqs []train.Sequence) {
		t.Helper()
		if _, err := tr.Accumulate(seqs, train.CrossEntropy{}); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		step(tr, []train.Sequence{train.ActionSequence([]int32{1, 40, 41, 42}, []int32{50, 51, 52, 53})})
	}
	err = tr.SaveAdapter(init)
	tr.Close()
	if err != nil {
		t.Fatal(err)
	}
	cfg := lettersConfig("grpo", 2)
	cfg.InitAdapter = init
	r, err := Open(cfg, Options{ModelPath: model, Dir: t.TempDir(), NewEnv: func() envs.Env { return &letters{} }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddAdapter("other", train.AdapterOptions{Optimizer: train.AdamW{LR: 1e-2}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.WarmStart(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Four actions in each of three contexts, as a cycle's samples are.
	var seqs []train.Sequence
	for p := range int32(3) {
		for a := range int32(4) {
			seqs = append(seqs, train.ActionSequence([]int32{1, 40 + p, 41, 42, 43}, []int32{50 + a, 60 + p, 70}))
		}
	}
	want, err := r.LogProbs(seqs, false)
	if err != nil {
		t.Fatal(err)
	}
	base, err := r.LogProbs(seqs, true)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxActionDiff(seqs, want, base); d < 0.1 {
		t.Fatalf("the warm start differs from the base model by only %g: the test would prove nothing", d)
	}
	if err := r.Trainer.UseAdapter("other"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		step(r.Trainer, seqs)
	}
	if err := r.Trainer.UseAdapter(ActorAdapter); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		ref, err := r.Reference(1, "warm_start")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		got, err := ref(seqs)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if d := maxActionDiff(seqs, got, want); d > 1e-6 || r.Trainer.ActiveAdapter() != ActorAdapter {
			t.Fatalf("%s: reference log-probs differ from the warm start's by %g; active adapter %s", when, d, r.Trainer.ActiveAdapter())
		}
	}
	check("after another adapter's update")
	step(r.Trainer, seqs)
	if moved, _ := r.LogProbs(seqs, false); maxActionDiff(seqs, moved, want) < 1e-3 {
		t.Fatal("the actor's update did not change its log-probs: the test would prove nothing")
	}
	check("after the actor's update")
}

// maxActionDiff is the largest difference between two sets of
// log-probabilities of seqs over the tokens that carry a weight.
func maxActionDiff(seqs []train.Sequence, a, b [][]float32) float64 {
	d := 0.0
	for s, seq := range seqs {
		for i, w := range seq.Weights {
			if w != 0 {
				d = max(d, math.Abs(float64(a[s][i]-b[s][i])))
			}
		}
	}
	return d
}

// longWinded is letters with a second step whose observation alone is
// longer than the tests' 256-token context.
type longWinded struct{ letters }

func (l *longWinded) Spec() envs.Spec {
	s := l.letters.Spec()
	s.MaxSteps = 2
	return s
}

func (l *longWinded) Step(text string) (envs.StepResult, error) {
	res, err := l.letters.Step(text)
	res.Done, res.Info.Success = false, false
	res.Observation = strings.Repeat("and then ", 400)
	return res, err
}

// TestContextFullEpisodesAreTrainedAndCounted: episodes whose
// conversation outgrows rollout.context end there, as truncated, and the
// iteration trains on their first steps and counts them.
func TestContextFullEpisodesAreTrainedAndCounted(t *testing.T) {
	cfg := lettersConfig("grpo", 1)
	dir := t.TempDir()
	err := Train(context.Background(), cfg, Options{ModelPath: byteModel(t), Dir: dir, NewEnv: func() envs.Env { return &longWinded{} }})
	if err != nil {
		t.Fatalf("episodes cut short by the context should not stop the run: %v", err)
	}
	m := readMetrics(t, dir)[0]
	if m.Metrics["context_full"] != 32 || m.Failed != 0 || m.Episodes != 32 || m.EnvSteps != 32 || m.GradSteps == 0 {
		t.Fatalf("iteration metrics: context_full %v, failed %d, episodes %d, env steps %d, grad steps %d; want 32 episodes of one step each, all cut short, trained on",
			m.Metrics["context_full"], m.Failed, m.Episodes, m.EnvSteps, m.GradSteps)
	}
}

// TestLongUpdatesSayHowTheyGo: an optimiser step taken half a minute or
// more after the last progress line writes one (adapter, step, loss,
// speed); the next step at once does not, nor a step of a fine-tuning,
// which writes lines of its own.
func TestLongUpdatesSayHowTheyGo(t *testing.T) {
	var log strings.Builder
	r, err := Open(lettersConfig("grpo", 1), Options{ModelPath: byteModel(t), Dir: t.TempDir(), NewEnv: func() envs.Env { return &letters{} }, Progress: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	log.Reset() // what Open says of the trainer
	seqs := []train.Sequence{{Tokens: []int32{1, 40, 41, 42, 43}}}
	step := func() {
		t.Helper()
		if _, err := r.Update(seqs, [][]int{{0}}, func([]int) train.Loss { return train.CrossEntropy{} }); err != nil {
			t.Fatal(err)
		}
	}
	r.BeginIteration(1)
	r.updateLogged = time.Now().Add(-time.Minute) // as after minutes of rollouts
	step()
	step()
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "update of the actor: step 1 of the iteration, loss ") || !strings.Contains(lines[0], "tokens in") {
		t.Fatalf("progress after two steps:\n%s\nwant one line for step 1", log.String())
	}
	log.Reset()
	r.updateLogged = time.Now().Add(-time.Minute)
	r.fineTuning = true
	step()
	if log.Len() != 0 {
		t.Errorf("a fine-tuning's step wrote %q", log.String())
	}
}

// TestMemoryBoundRecomputesAndSays: a micro-batch over lora.memory_mib is
// recomputed (gradient checkpointing), which the iteration's metrics count
// and its log says, and the run learns exactly what an unbounded one does.
func TestMemoryBoundRecomputesAndSays(t *testing.T) {
	model := byteModel(t)
	newEnv := func() envs.Env { return &letters{} }
	freeDir := t.TempDir()
	if err := Train(context.Background(), lettersConfig("grpo", 1), Options{ModelPath: model, Dir: freeDir, NewEnv: newEnv}); err != nil {
		t.Fatal(err)
	}
	free := readMetrics(t, freeDir)[0]
	if _, ok := free.Metrics["recomputed_micro_batches"]; ok {
		t.Fatalf("an unbounded run counts recomputed micro-batches: %v", free.Metrics)
	}
	actor := func(dir string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, "adapters", ActorAdapter+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// The smallest bound in MiB that a checkpointed micro-batch fits.
	for mib := 1; mib <= 64; mib++ {
		cfg := lettersConfig("grpo", 1)
		cfg.LoRA.MemoryMiB = mib
		var log strings.Builder
		dir := t.TempDir()
		err := Train(context.Background(), cfg, Options{ModelPath: model, Dir: dir, NewEnv: newEnv, Progress: &log})
		if err != nil {
			if !strings.Contains(err.Error(), "over the budget") {
				t.Fatalf("memory_mib %d: %v", mib, err)
			}
			continue
		}
		m := readMetrics(t, dir)[0]
		if m.Metrics["recomputed_micro_batches"] < 1 {
			t.Fatalf("memory_mib %d, the smallest that trains, recomputed nothing: %v", mib, m.Metrics)
		}
		if !strings.Contains(log.String(), "recomputed their activations") {
			t.Errorf("the log does not say the micro-batches were recomputed:\n%s", log.String())
		}
		if m.Loss != free.Loss {
			t.Errorf("loss %v with recomputed activations, %v without: want the same", m.Loss, free.Loss)
		}
		if !bytes.Equal(actor(dir), actor(freeDir)) {
			t.Error("the actor trained with recomputed activations differs from the one trained without")
		}
		return
	}
	t.Fatal("no bound up to 64 MiB trained the tiny model")
}
