package stepagent

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/initmodel/initmodeltest"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rl"
)

func TestReadExperts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "experts.jsonl")
	lines := []string{
		`{"id": "a", "conversations": [{"from": "human", "value": "You are an agent."}, {"from": "gpt", "value": "OK", "loss": false}, {"from": "human", "value": "Task: buy socks"}, {"from": "gpt", "value": "Action: search[socks]"}, {"from": "human", "value": "Results"}, {"from": "gpt", "value": "Action: click[b1]"}]}`,
		``,
		`{"messages": [{"role": "system", "content": "Act."}, {"role": "user", "content": "Say go"}, {"role": "assistant", "content": "Action: go"}]}`,
	}
	// A byte-order mark, as some editors write, is not part of line 1.
	if err := os.WriteFile(path, []byte("\ufeff"+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadExperts(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d trajectories, want 2", len(got))
	}
	if !slices.Equal(got[0].Steps, []int{3, 5}) || got[0].Messages[1].Role != chat.Assistant || got[0].Source != path+":1" {
		t.Fatalf("first: steps %v (the acknowledgement is context), source %s", got[0].Steps, got[0].Source)
	}
	if !slices.Equal(got[1].Steps, []int{2}) || got[1].Messages[0].Role != chat.System || got[1].Source != path+":3" {
		t.Fatalf("second: %+v", got[1])
	}

	for _, c := range []struct{ line, want string }{
		{`{"conversations": [{"from": "robot", "value": "x"}]}`, `unknown speaker "robot"`},
		{`{"messages": [{"role": "user", "content": "x"}]}`, "no assistant turn"},
		{`{"messages": [{"role": "assistant", "content": "x"}]}`, "begins with an assistant turn"},
		{`{"text": "x"}`, `no "conversations" or "messages"`},
		{`{"messages": [`, "unexpected end"},
		{`{"conversations": [{"from": "human", "value": "x"}, {"from": "gpt", "content": "Action: go"}]}`, `conversation turn 2: no "value"`},
		{`{"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": null}]}`, `message 2: no "content"`},
		{`{"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "  "}]}`, "message 2: an empty action"},
		{`{"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]}`, "message 3: two assistant turns in a row"},
		{`{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "x"}, {"role": "user", "content": "y"}, {"role": "assistant", "content": "a"}]}`, "message 3: two user turns in a row"},
	} {
		bad := filepath.Join(t.TempDir(), "bad.jsonl")
		os.WriteFile(bad, []byte(lines[2]+"\n"+c.line+"\n"), 0o644)
		if _, err := ReadExperts(bad); err == nil || !strings.Contains(err.Error(), bad+":2") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error at line 2 containing %q", c.line, err, c.want)
		}
	}
}

// TestWarmStartFromFileLearnsOnlySteps: a turn a file marks "loss":
// false (AgentInstruct's "OK") is context in the warm start, not a
// target, and a conversation longer than the context is left out and
// counted.
func TestWarmStartFromFileLearnsOnlySteps(t *testing.T) {
	m, err := llm.Load(byteModel(t), llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ack, err := parseExpertLine([]byte(`{"conversations": [{"from": "human", "value": "Rules."}, {"from": "gpt", "value": "OK", "loss": false}, {"from": "human", "value": "Say go."}, {"from": "gpt", "value": "Action: go"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	long := ack
	long.Messages = append(slices.Clone(ack.Messages[:2]), chat.Message{Role: chat.User, Content: strings.Repeat("far ", 200)}, ack.Messages[3])
	seqs, outgrew, err := fileSequences(m, []Trajectory{ack, long}, 0, 400)
	if err != nil || len(seqs) != 1 || outgrew != 1 {
		t.Fatalf("%d sequences, %d outgrew the context, %v; want 1 and 1", len(seqs), outgrew, err)
	}
	var learned []int32
	for i, w := range seqs[0].Weights {
		if w != 0 {
			learned = append(learned, seqs[0].Tokens[i])
		}
	}
	text, _ := m.Detokenize(learned, false)
	if !strings.HasPrefix(text, "Action: go") || strings.Contains(text, "OK") {
		t.Fatalf("the warm start learns %q: want the step's action alone", text)
	}
}

// say is a two-step task with an expert: say "go", then "stop".
type say struct{ step int }

func (s *say) Spec() envs.Spec {
	return envs.Spec{Name: "say", Instruction: "Do as told. Answer with Action: WORD", MaxSteps: 2, RewardMax: 1, Splits: envs.Splits}
}
func (s *say) Reset(envs.Split, int64) (string, error) { s.step = 0; return "Say go.", nil }
func (s *say) AvailableActions() []string              { return nil }
func (s *say) ExpertAction() (string, error) {
	return []string{"Action: go", "Action: stop"}[s.step], nil
}
func (s *say) Step(text string) (envs.StepResult, error) {
	if s.step >= 2 {
		return envs.StepResult{}, errors.New("episode over")
	}
	want := []string{"go", "stop"}[s.step]
	ok := envs.ParseAction(text) == want
	s.step++
	if !ok {
		return envs.StepResult{Observation: "Wrong.", Done: true, Info: envs.Info{ValidAction: true}}, nil
	}
	if s.step == 2 {
		return envs.StepResult{Observation: "Done.", Reward: 1, Done: true, Info: envs.Info{ValidAction: true, Success: true, Score: 1}}, nil
	}
	return envs.StepResult{Observation: "Say stop.", Info: envs.Info{ValidAction: true}}, nil
}

// byteModel writes the byte model (initmodeltest.Bytes) the tests train.
func byteModel(t *testing.T) string { return initmodeltest.Bytes(t, 512) }

// TestPrefixesAndPairs checks the inspection's states and the sequences
// reflection builds from them on a hand-made expert trajectory: the
// prefix is the conversation before the step as inference renders it,
// the expert's action its assistant turn through the end-of-turn token.
func TestPrefixesAndPairs(t *testing.T) {
	m, err := llm.Load(byteModel(t), llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	msgs := []chat.Message{{Role: chat.System, Content: "Act."}, {Role: chat.User, Content: "Say go."},
		{Role: chat.Assistant, Content: "Action: go"}, {Role: chat.User, Content: "Say stop."}, {Role: chat.Assistant, Content: "Action: stop"}}
	traj := Trajectory{Source: "hand", Messages: msgs, Steps: []int{2, 4}}
	prefixes, skipped, err := Prefixes(m, []Trajectory{traj}, 512, 16)
	if err != nil || skipped != 0 || len(prefixes) != 2 {
		t.Fatalf("%d prefixes, %d skipped, %v", len(prefixes), skipped, err)
	}
	for i, at := range []int{2, 4} {
		want, _ := m.Tokenize(m.RenderChat(msgs[:at], true), true, true)
		p := prefixes[i]
		if !slices.Equal(p.Prompt, want) || p.Expert != msgs[at].Content || p.Step != i {
			t.Fatalf("prefix %d: %+v", i, p)
		}
		text, _ := m.Detokenize(p.ExpertTokens, true)
		if !strings.HasPrefix(text, msgs[at].Content) || !m.IsEOG(p.ExpertTokens[len(p.ExpertTokens)-1]) {
			t.Fatalf("expert turn %q", text)
		}
		chosen := expertSequence(Step{Prompt: p.Prompt, ExpertTokens: p.ExpertTokens})
		if len(chosen.Tokens) != len(p.Prompt)+len(p.ExpertTokens) || chosen.Weights[len(p.Prompt)-1] != 0 || chosen.Weights[len(p.Prompt)] != 1 {
			t.Fatalf("chosen sequence weights %v", chosen.Weights)
		}
		// The discriminator's judgement of the action: the state and the
		// action, probed after it for " Yes" (7) and " No" (8) in two
		// sequences of the same context.
		var judged []train.Sequence
		var pairs []train.Pair
		judgement{yes: 7, no: 8}.add(&judged, &pairs, p.Prompt, p.ExpertTokens)
		last := len(p.Prompt) + len(p.ExpertTokens)
		if len(judged) != 2 || pairs[0] != (train.Pair{Chosen: 0, Rejected: 1}) || !train.SameContext(judged[0], judged[1]) || len(judged[0].Tokens) != last+1 {
			t.Fatalf("judgement: %d sequences, pairs %v", len(judged), pairs)
		}
		for k, token := range []int32{7, 8} {
			if s := judged[k]; s.Weights[last] != 1 || s.Targets[last] != token || slices.Max(s.Weights[:last]) != 0 {
				t.Fatalf("judged sequence %d: weights %v targets %v", k, s.Weights, s.Targets)
			}
		}
	}
	if _, skipped, _ := Prefixes(m, []Trajectory{traj}, len(prefixes[1].Prompt)+8, 16); skipped != 1 {
		t.Fatalf("a prefix longer than the context allows was not skipped (%d)", skipped)
	}
	// At the edge: the longest judged sequence, the prompt, an action of
	// max_tokens and the judgement token, fills the context exactly.
	last := prefixes[1]
	edge := len(last.Prompt) + max(16, len(last.ExpertTokens)) + 1
	if _, skipped, _ := Prefixes(m, []Trajectory{traj}, edge, 16); skipped != 0 {
		t.Fatalf("context %d: %d skipped, want none", edge, skipped)
	}
	if _, skipped, _ := Prefixes(m, []Trajectory{traj}, edge-1, 16); skipped != 1 {
		t.Fatalf("context %d: %d skipped, want the last step, whose judgement would not fit", edge-1, skipped)
	}
}

// TestStepDPOLoss: the step-level DPO on hand-computed log-probabilities
// of a chosen (expert) and a rejected (agent) action in one state.
func TestStepDPOLoss(t *testing.T) {
	prompt := []int32{1, 2, 3}
	seqs := []train.Sequence{train.ActionSequence(prompt, []int32{4, 5}), train.ActionSequence(prompt, []int32{6})}
	logp := [][]float32{{0, 0, 0, -0.5, -0.25}, {0, 0, 0, -2}}
	grad := [][]float32{make([]float32, 5), make([]float32, 4)}
	// Chosen: log pi = -0.75, ref -1. Rejected: log pi = -2, ref -1.5.
	loss, _, err := train.DPO{Beta: 0.5, Pairs: []train.Pair{{Chosen: 0, Rejected: 1, RefChosen: -1, RefRejected: -1.5}}}.Eval(seqs, logp, grad)
	if err != nil {
		t.Fatal(err)
	}
	margin := 0.5 * ((-0.75 + 1) - (-2 + 1.5))
	if want := math.Log1p(math.Exp(-margin)); math.Abs(loss-want) > 1e-9 {
		t.Fatalf("loss %g, want %g", loss, want)
	}
	if grad[0][2] != 0 || grad[0][3] >= 0 || grad[1][3] <= 0 {
		t.Fatalf("gradients %v: the prompt must get none, the chosen action a push up, the rejected a push down", grad)
	}
}

// TestDiscriminatorSeparates trains a discriminator adapter to tell two
// kinds of actions apart through its log-odds of the judgement tokens.
func TestDiscriminatorSeparates(t *testing.T) {
	tr, err := train.New(byteModel(t), train.Config{Threads: 1, Seed: 3, Optimizer: train.AdamW{LR: 3e-3}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	judge := judgement{yes: 89, no: 78}
	var seqs []train.Sequence
	var pairs []train.Pair
	var labels []float64
	var rows [][]float64
	for i := range 16 {
		prompt := []int32{1, int32(40 + i), int32(60 + i%5)}
		judge.add(&seqs, &pairs, prompt, []int32{100, 101, 102})
		judge.add(&seqs, &pairs, prompt, []int32{200, int32(201 + i%3)})
		labels = append(labels, 1, 0)
		rows = append(rows, []float64{1}, []float64{0})
	}
	accuracy := func() float64 {
		lp, err := tr.LogProbs(seqs)
		if err != nil {
			t.Fatal(err)
		}
		odds, err := judgementOdds(seqs, lp, pairs)
		if err != nil {
			t.Fatal(err)
		}
		accuracy, _ := discriminatorAccuracy(odds, labels)
		return accuracy
	}
	before := accuracy()
	for range 20 {
		if _, err := tr.Accumulate(seqs, rl.LogOddsCrossEntropy{Pairs: pairs, Labels: rows}); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
	}
	after := accuracy()
	t.Logf("discriminator accuracy %.2f -> %.2f", before, after)
	if after < 0.95 {
		t.Fatalf("the discriminator does not separate expert from agent actions: accuracy %.2f", after)
	}
}

func readMetrics(t *testing.T, dir string) []rl.Metrics {
	t.Helper()
	ms, err := rl.ReadMetrics(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func sayConfig(reflection string, cycles int) rl.Config {
	cfg := rl.DefaultConfig()
	cfg.Algorithm, cfg.Env, cfg.Model, cfg.Iterations, cfg.Threads = "stepagent", "say", "bytes", cycles, 1
	cfg.Rollout = rl.RolloutConfig{Tasks: 4, MaxTokens: 8, Temperature: 1, Parallel: 16, Context: 512}
	cfg.Eval = rl.EvalConfig{Split: envs.Test}
	cfg.LoRA = rl.LoRAConfig{Rank: 8, BatchTokens: 4096}
	// A light warm start leaves the agent agreeing with the expert now and
	// then, so that inspection finds both kinds of actions.
	cfg.WarmStart = rl.SFTConfig{Demos: 8, Epochs: 1, LR: 5e-3, BatchTokens: 128}
	cfg.StepAgent.Reflection = reflection
	cfg.StepAgent.Trajectories, cfg.StepAgent.Samples, cfg.StepAgent.LR = 4, 4, 5e-3
	cfg.StepAgent.Minibatches, cfg.StepAgent.Epochs = 4, 2
	return cfg
}

// TestStepAdvantages: against the cycle's mean, a state whose actions the
// discriminator all rates high gives each of them a positive advantage;
// against the state's own mean only the differences between its actions
// count, and a state whose actions are rated alike gives none.
func TestStepAdvantages(t *testing.T) {
	rewards := []float64{1, 3, 10, 12}
	states := [][]int{{0, 1}, {2, 3}}
	check := func(got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-6 {
				t.Fatalf("advantages %v, want %v", got, want)
			}
		}
	}
	// Differences from 6.5: -5.5, -3.5, 3.5, 5.5; their standard deviation sqrt(85/3).
	sd := math.Sqrt(85.0 / 3)
	check(stepAdvantages(rewards, states, "cycle"), []float64{-5.5 / sd, -3.5 / sd, 3.5 / sd, 5.5 / sd})
	// Differences from 2 and 11: -1, 1, -1, 1; their standard deviation sqrt(4/3).
	sd = math.Sqrt(4.0 / 3)
	check(stepAdvantages(rewards, states, "state"), []float64{-1 / sd, 1 / sd, -1 / sd, 1 / sd})
	check(stepAdvantages([]float64{2, 2, 7, 7}, states, "state"), []float64{0, 0, 0, 0})
}

// TestTokenAdvantages: with the "tree" baseline a token's advantage is
// the mean reward of the state's samples sharing the action up to it less
// that of those sharing it up to the token before (hand-computed below),
// so a prefix every sample of a state shares gets 0; with "state" every
// token has its sample's advantage.
func TestTokenAdvantages(t *testing.T) {
	actions := [][]int32{{1, 2, 3}, {1, 2, 4}, {1, 5}, {1, 2, 3}, {7}, {8}}
	rewards := []float64{1, 0, 0.5, 1, 2, 4}
	states := [][]int{{0, 1, 2, 3}, {4, 5}}
	// The state-centred rewards: 0.375, -0.625, -0.125, 0.375, -1, 1;
	// their standard deviation sqrt(2.6875/5).
	sd := math.Sqrt(2.6875 / 5)
	// State 1's mean is 0.625; its samples beginning 1, 2 have mean 2/3,
	// those beginning 1, 2, 3 mean 1, and 1, 2, 4 and 1, 5 their own.
	want := [][]float64{
		{0, 2.0/3 - 0.625, 1 - 2.0/3},
		{0, 2.0/3 - 0.625, 0 - 2.0/3},
		{0, 0.5 - 0.625},
		{0, 2.0/3 - 0.625, 1 - 2.0/3},
		{-1}, {1},
	}
	got := tokenAdvantages(rewards, states, actions, "tree")
	for i := range want {
		for k := range want[i] {
			if len(got[i]) != len(want[i]) || math.Abs(got[i][k]-want[i][k]/sd) > 1e-6 {
				t.Fatalf("sample %d: tree advantages %v, want %v / %g", i, got[i], want[i], sd)
			}
		}
	}
	perSample := stepAdvantages(rewards, states, "state")
	for i, adv := range tokenAdvantages(rewards, states, actions, "state") {
		if len(adv) != len(actions[i]) {
			t.Fatalf("sample %d: %d advantages for %d tokens", i, len(adv), len(actions[i]))
		}
		for _, a := range adv {
			if a != perSample[i] {
				t.Fatalf("sample %d: state advantages %v, want %g on every token", i, adv, perSample[i])
			}
		}
	}
}

// TestDiscriminatorAccuracyIsBalanced: a discriminator that calls every
// action the agent's is right on the K agent actions of each state and
// wrong on the one expert action; the pause gate must see chance, not
// K/(K+1).
func TestDiscriminatorAccuracyIsBalanced(t *testing.T) {
	labels := []float64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	odds := []float64{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
	if accuracy, balanced := discriminatorAccuracy(odds, labels); accuracy != 0.9 || balanced != 0.5 {
		t.Fatalf("accuracy %g, balanced %g; want 0.9 and 0.5", accuracy, balanced)
	}
	odds[0], odds[1] = 2, 3 // the expert's right, one agent action wrong
	if accuracy, balanced := discriminatorAccuracy(odds, labels); accuracy != 0.9 || math.Abs(balanced-(1+8.0/9)/2) > 1e-12 {
		t.Fatalf("accuracy %g, balanced %g; want 0.9 and %g", accuracy, balanced, (1+8.0/9)/2)
	}
	if accuracy, balanced := discriminatorAccuracy([]float64{1, -1}, []float64{1, 1}); accuracy != 0.5 || balanced != 0.5 {
		t.Fatalf("one class only: accuracy %g, balanced %g; want 0.5 and 0.5", accuracy, balanced)
	}
}

// TestStepAgentRaisesAgreement runs StepAgent with implicit reflection
// from the random byte model, lightly warm-started, on the two-step "say"
// task: the expert's actions' log-likelihood must rise and the step
// agreement must not fall.
func TestStepAgentRaisesAgreement(t *testing.T) {
	dir := t.TempDir()
	cfg := sayConfig("implicit", 6)
	cfg.StepAgent.Probe = 2 // 4 held-out steps, the same in every cycle
	err := rl.Train(context.Background(), cfg, rl.Options{ModelPath: byteModel(t), Dir: dir, NewEnv: func() envs.Env { return &say{} }})
	if err != nil {
		t.Fatal(err)
	}
	ms := readMetrics(t, dir)
	for _, m := range ms {
		t.Logf("cycle %d: agreement %.2f (samples %.2f), expert log-likelihood %.3f, pairs %.0f, loss %.4f; probe: agreement %.2f, log-likelihood %.3f",
			m.Iteration, m.Metrics["step_agreement"], m.Metrics["sample_agreement"], m.Metrics["expert_loglik"], m.Metrics["pairs"], m.Loss,
			m.Metrics["probe_agreement"], m.Metrics["probe_loglik"])
		// Every task of "say" has the same expert steps, so the held-out
		// probe measures what the cycle's inspection does.
		agree, ok := m.Metrics["probe_agreement"]
		if !ok || agree != m.Metrics["step_agreement"] || math.Abs(m.Metrics["probe_loglik"]-m.Metrics["expert_loglik"]) > 1e-3 {
			t.Errorf("cycle %d: probe agreement %v (logged: %v), log-likelihood %.4f; want the inspection's %v and %.4f", m.Iteration,
				agree, ok, m.Metrics["probe_loglik"], m.Metrics["step_agreement"], m.Metrics["expert_loglik"])
		}
	}
	// After the last cycle's reflection the probe is measured once more:
	// the policy the run ends with, which that reflection moved.
	for _, m := range ms {
		_, ok := m.Metrics["probe_agreement_final"]
		if last := m.Iteration == len(ms); ok != last || (last && m.Metrics["probe_loglik_final"] == m.Metrics["probe_loglik"]) {
			t.Errorf("cycle %d: final probe logged %v, log-likelihood %v (before the reflection %v)", m.Iteration, ok, m.Metrics["probe_loglik_final"], m.Metrics["probe_loglik"])
		}
	}
	// Every environment step counted is the warm start's or a cycle's
	// expert's (2 steps per task): the probe's are measurement.
	if want := int64(2 * (8 + 6*4)); ms[len(ms)-1].EnvSteps != want {
		t.Errorf("env steps %d, want %d (8 demonstrations and 6 cycles of 4 trajectories, 2 steps each)", ms[len(ms)-1].EnvSteps, want)
	}
	// Cycle 1 inspects the warm-started policy, before any update; each
	// cycle inspects other expert steps (8 of them), so the last three
	// cycles are averaged. (The agent's sampled actions, and with them the
	// updates, depend on how the engine's batches happened to form, so a
	// run's figures vary from machine to machine.)
	mean := func(ms []rl.Metrics, key string) float64 {
		sum := 0.0
		for _, m := range ms {
			sum += m.Metrics[key]
		}
		return sum / float64(len(ms))
	}
	first, last := ms[:1], ms[len(ms)-3:]
	if mean(last, "expert_loglik") < mean(first, "expert_loglik")+0.5 {
		t.Fatalf("expert log-likelihood %.3f -> %.3f: did not rise", mean(first, "expert_loglik"), mean(last, "expert_loglik"))
	}
	if mean(last, "step_agreement") < mean(first, "step_agreement") {
		t.Fatalf("step agreement %.3f -> %.3f: fell", mean(first, "step_agreement"), mean(last, "step_agreement"))
	}
}

// TestStepDPOStartsAtTheReference runs implicit reflection with one
// optimiser step a cycle, against either reference. The expert's actions
// get their reference log-probabilities once per state (with "cycle",
// those the inspection computed), the rejected ones per pair; where the
// reference is the policy being trained, every margin is 0 and the step's
// loss is ln 2: in every cycle with "cycle", in the first with
// "warm_start" (the warm start is then the policy).
func TestStepDPOStartsAtTheReference(t *testing.T) {
	for _, ref := range []string{"cycle", "warm_start"} {
		t.Run(ref, func(t *testing.T) {
			dir := t.TempDir()
			cfg := sayConfig("implicit", 2)
			cfg.StepAgent.Reference = ref
			cfg.StepAgent.Epochs, cfg.StepAgent.Minibatches = 1, 1
			err := rl.Train(context.Background(), cfg, rl.Options{ModelPath: byteModel(t), Dir: dir, NewEnv: func() envs.Env { return &say{} }})
			if err != nil {
				t.Fatal(err)
			}
			ms := readMetrics(t, dir)
			if len(ms) != 2 {
				t.Fatalf("%d cycles logged, want 2", len(ms))
			}
			for i, m := range ms {
				loss := m.Losses["step_dpo"]
				t.Logf("cycle %d: pairs %.0f, step-DPO loss %.5f", m.Iteration, m.Metrics["pairs"], loss)
				if m.Metrics["pairs"] == 0 {
					t.Fatalf("cycle %d: no pairs", m.Iteration)
				}
				if (ref == "cycle" || i == 0) && math.Abs(loss-math.Ln2) > 5e-3 {
					t.Errorf("cycle %d: step-DPO loss %.5f, want ln 2 = %.5f: the policy is the reference", m.Iteration, loss, math.Ln2)
				}
			}
		})
	}
}

// TestProbeNeedsConversationsLeft: a probe that would take every
// conversation of an expert file leaves the cycles nothing, an error.
func TestProbeNeedsConversationsLeft(t *testing.T) {
	file := make([]Trajectory, 3)
	_, _, err := holdOutProbe(context.Background(), nil, file, 3)
	if err == nil || !strings.Contains(err.Error(), "stepagent.probe 3: the expert file has 3 conversations") {
		t.Fatalf("want an error naming stepagent.probe and the file's size, got %v", err)
	}
}

// TestStepAgentIRLRun runs the inverse-RL reflection end to end: the
// discriminator is trained and checkpointed with the actor, and every
// cycle logs its accuracy and the mean step reward.
// With stepagent.kl the policy's update also keeps near the warm start,
// and the cycles log their KL estimate, positive once the policy moved.
// The discriminator takes stepagent.discriminator_epochs passes of
// stepagent.minibatches steps, and says how well it then fits its data.
func TestStepAgentIRLRun(t *testing.T) {
	dir := t.TempDir()
	cfg := sayConfig("irl", 2)
	// The byte model has no " Yes" token: judgement tokens of its own.
	cfg.StepAgent.JudgementToken, cfg.StepAgent.NegativeToken = "y", "n"
	cfg.StepAgent.KL = 0.1
	cfg.StepAgent.DiscriminatorEpochs = 3
	model := byteModel(t)
	newEnv := func() envs.Env { return &say{} }
	err := rl.Train(context.Background(), cfg, rl.Options{ModelPath: model, Dir: dir, NewEnv: newEnv})
	if err != nil {
		t.Fatal(err)
	}
	ms := readMetrics(t, dir)
	for _, m := range ms {
		t.Logf("cycle %d: discriminator accuracy %.2f (paused %v), step reward %.3f, policy loss %.4f, KL to the warm start %.5f",
			m.Iteration, m.Metrics["disc_accuracy"], m.Metrics["disc_paused"] == 1, m.Metrics["step_reward"], m.Losses["policy"], m.Metrics["kl"])
		paused, logged := m.Metrics["disc_paused"]
		if _, ok := m.Metrics["disc_accuracy"]; !ok || !logged || m.Losses["discriminator"] == 0 && paused == 0 {
			t.Fatalf("cycle %d: no discriminator figures: %+v", m.Iteration, m)
		}
		if fit, ok := m.Metrics["disc_fit_balanced_accuracy"]; ok != (paused == 0) || ok && !(fit >= 0 && fit <= 1) {
			t.Fatalf("cycle %d: disc_fit_balanced_accuracy %g (logged %v) with paused %v: want it in [0, 1] after every update", m.Iteration, fit, ok, paused)
		}
	}
	// Cycle 2's steps: the policy's 2 epochs of 4 minibatches, and the
	// discriminator's 3 of 4 unless it paused.
	want := int64(8)
	if ms[1].Metrics["disc_paused"] == 0 {
		want += 12
	}
	if got := ms[1].GradSteps - ms[0].GradSteps; got != want {
		t.Errorf("cycle 2 took %d optimiser steps, want %d", got, want)
	}
	if kl := ms[len(ms)-1].Metrics["kl"]; !(kl > 0) {
		t.Fatalf("the last cycle's KL to the warm start is %g: want it measured and positive", kl)
	}
	for _, f := range []string{"adapters/discriminator.gguf", "checkpoints/iter-000002/discriminator.ckpt", "checkpoints/iter-000002/actor.ckpt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}

	// agentrl inspect: the same samples (same seed), judged by the run's
	// discriminator and by the untrained one, the base model, which the
	// three passes of two cycles must have moved away from.
	trained, untrained := inspectBoth(t, dir, model, newEnv)
	moved := false
	for i, st := range trained.Steps {
		if len(trained.Rewards[i]) != len(st.Samples) || len(untrained.Rewards[i]) != len(st.Samples) || len(trained.ExpertRewards) != len(trained.Steps) {
			t.Fatalf("step %d: %d samples, rewards %d (trained) and %d (untrained), %d expert rewards for %d steps",
				i, len(st.Samples), len(trained.Rewards[i]), len(untrained.Rewards[i]), len(trained.ExpertRewards), len(trained.Steps))
		}
		for k, s := range st.Samples {
			if s.Text != untrained.Steps[i].Samples[k].Text {
				t.Fatalf("step %d sample %d: %q, then %q: the inspection's samples must not depend on the discriminator", i, k, s.Text, untrained.Steps[i].Samples[k].Text)
			}
			moved = moved || math.Abs(trained.Rewards[i][k]-untrained.Rewards[i][k]) > 1e-3
		}
		moved = moved || math.Abs(trained.ExpertRewards[i]-untrained.ExpertRewards[i]) > 1e-3
	}
	if len(trained.Steps) != 2 || !moved {
		t.Fatalf("%d steps inspected (want 2); rewards of the trained and untrained discriminators differ: %v\ntrained %v %v\nuntrained %v %v",
			len(trained.Steps), moved, trained.ExpertRewards, trained.Rewards, untrained.ExpertRewards, untrained.Rewards)
	}
}

// inspectBoth is `agentrl inspect` of train task 0 of the run in dir with
// the run's discriminator and with the untrained one.
func inspectBoth(t *testing.T, dir, model string, newEnv func() envs.Env) (trained, untrained Inspection) {
	t.Helper()
	var err error
	if trained, err = InspectRun(context.Background(), dir, model, newEnv, envs.Train, 0, false); err != nil {
		t.Fatal(err)
	}
	if untrained, err = InspectRun(context.Background(), dir, model, newEnv, envs.Train, 0, true); err != nil {
		t.Fatal(err)
	}
	return trained, untrained
}

// TestResidualDiscriminatorStartsAtHalf: with
// stepagent.discriminator_residual the discriminator's log-odds are its
// adapter's change to the base model's, so before its first update it
// judges every action D = 1/2 (balanced accuracy exactly 1/2: every
// action on the agent's side), where the plain one starts from the base
// model's judgement; and it still learns, in training and as
// `agentrl inspect` reads it.
func TestResidualDiscriminatorStartsAtHalf(t *testing.T) {
	dir := t.TempDir()
	cfg := sayConfig("irl", 2)
	cfg.StepAgent.JudgementToken, cfg.StepAgent.NegativeToken = "y", "n"
	cfg.StepAgent.DiscriminatorResidual, cfg.StepAgent.DiscriminatorEpochs = true, 3
	// And the policy's advantages per token (the "tree" baseline), end
	// to end.
	cfg.StepAgent.Baseline = "tree"
	model := byteModel(t)
	newEnv := func() envs.Env { return &say{} }
	if err := rl.Train(context.Background(), cfg, rl.Options{ModelPath: model, Dir: dir, NewEnv: newEnv}); err != nil {
		t.Fatal(err)
	}
	ms := readMetrics(t, dir)
	for _, m := range ms {
		t.Logf("cycle %d: balanced accuracy %.3f before the update, %.3f after (fit), loss %.4f",
			m.Iteration, m.Metrics["disc_balanced_accuracy"], m.Metrics["disc_fit_balanced_accuracy"], m.Losses["discriminator"])
	}
	if b := ms[0].Metrics["disc_balanced_accuracy"]; b != 0.5 {
		t.Fatalf("cycle 1: a residual discriminator before any update has balanced accuracy %v, want exactly 0.5 (log-odds 0 on every action)", b)
	}
	// At this seed cycle 1's fit says "agent" to everything (its data
	// are mostly the agent's); cycle 2's separates.
	if loss, ok := ms[0].Losses["policy"]; !ok || loss == 0 {
		t.Fatalf("cycle 1: policy loss %v (logged %v): want the policy updated on per-token advantages", loss, ok)
	}
	if fit := ms[1].Metrics["disc_fit_balanced_accuracy"]; !(fit > 0.75) {
		t.Fatalf("cycle 2: after three passes the residual discriminator fits its data at balanced accuracy %v: want above 0.75", fit)
	}

	trained, untrained := inspectBoth(t, dir, model, newEnv)
	moved := false
	for i := range untrained.Steps {
		for k, r := range untrained.Rewards[i] {
			if r != 0 || untrained.ExpertRewards[i] != 0 {
				t.Fatalf("step %d sample %d: the untrained residual discriminator's reward %v (expert's %v): want 0", i, k, r, untrained.ExpertRewards[i])
			}
			moved = moved || trained.Rewards[i][k] != 0
		}
	}
	if !moved {
		t.Fatalf("the trained residual discriminator gives every sample reward 0: %v", trained.Rewards)
	}
	var text strings.Builder
	if err := untrained.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "step rewards: log-odds of the untrained discriminator (the base model's judgement, no adapter), less the base model's") ||
		!strings.Contains(text.String(), "[reward +0.00]") {
		t.Fatalf("the inspection's text does not say whose rewards it shows:\n%s", text.String())
	}
}

// TestStepAgentIRLPretrainsAndGates: with stepagent.discriminator_pretrain
// the discriminator trains on the expert's trajectories of tasks no cycle
// plays before the first cycle, in a cycle's minibatch size, and its
// figures are the first cycle's; with stepagent.min_accuracy a cycle whose
// discriminator judged the new actions below it leaves the policy alone.
func TestStepAgentIRLPretrainsAndGates(t *testing.T) {
	dir := t.TempDir()
	cfg := sayConfig("irl", 2)
	cfg.StepAgent.JudgementToken, cfg.StepAgent.NegativeToken = "y", "n"
	// 8 trajectories of 2 steps: two cycles' worth, so each pass takes
	// 2 x 4 optimiser steps.
	cfg.StepAgent.DiscriminatorPretrain, cfg.StepAgent.DiscriminatorEpochs = 8, 2
	// Below 0.6 the policy waits: at this seed the first cycle's
	// discriminator judges at chance and the second's above, so both
	// branches run; either way the metrics must agree with the gate.
	cfg.StepAgent.MinAccuracy = 0.6
	var log strings.Builder
	err := rl.Train(context.Background(), cfg, rl.Options{ModelPath: byteModel(t), Dir: dir, NewEnv: func() envs.Env { return &say{} }, Progress: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "discriminator pre-training: 8 trajectories, 16 steps") ||
		!strings.Contains(log.String(), "2 passes of 8 minibatches") {
		t.Fatalf("want the pre-training on 8 trajectories of 2 steps, 2 passes of 8 minibatches; log:\n%s", log.String())
	}
	ms := readMetrics(t, dir)
	first := ms[0]
	n, fit := first.Metrics["disc_pretrain_judgements"], first.Metrics["disc_pretrain_fit_balanced_accuracy"]
	// One expert action and up to 4 differing samples a step.
	if n < 16 || n > 16*5 || !(fit >= 0 && fit <= 1) || !(first.Losses["discriminator_pretrain"] > 0) {
		t.Fatalf("cycle 1: pre-training judgements %v (want 16-80), fit balanced accuracy %v, loss %v", n, fit, first.Losses["discriminator_pretrain"])
	}
	if _, ok := ms[1].Metrics["disc_pretrain_judgements"]; ok {
		t.Fatal("cycle 2 logged pre-training figures: want them in cycle 1 only")
	}
	var sawPaused, sawUpdated bool
	for _, m := range ms {
		balanced, paused := m.Metrics["disc_balanced_accuracy"], m.Metrics["policy_paused"]
		sawPaused, sawUpdated = sawPaused || paused == 1, sawUpdated || paused == 0
		t.Logf("cycle %d: discriminator balanced accuracy %.3f before its update, policy paused %v", m.Iteration, balanced, paused == 1)
		if wantPaused := balanced < 0.6; paused != 0 && paused != 1 || (paused == 1) != wantPaused {
			t.Fatalf("cycle %d: discriminator balanced accuracy %.3f, policy_paused %v: want it paused below 0.6", m.Iteration, balanced, paused)
		}
		if _, updated := m.Losses["policy"]; updated == (paused == 1) {
			t.Fatalf("cycle %d: policy_paused %v, policy loss logged %v", m.Iteration, paused, updated)
		}
	}
	if !sawPaused || !sawUpdated {
		t.Fatalf("the gate paused the policy in some cycle %v and let it update in some %v: want both, or the test no longer checks the gate", sawPaused, sawUpdated)
	}
	// Cycle 2's steps: the discriminator's 2 passes of 4 minibatches
	// unless it paused, the policy's 2 epochs of 4 unless it did.
	want := int64(0)
	if ms[1].Metrics["disc_paused"] == 0 {
		want += 8
	}
	if ms[1].Metrics["policy_paused"] == 0 {
		want += 8
	}
	if got := ms[1].GradSteps - ms[0].GradSteps; got != want {
		t.Errorf("cycle 2 took %d optimiser steps, want %d", got, want)
	}
}

// TestProbeIsHeldOutOfTheWarmStart: with an expert file, the probe's
// conversations (the file's last) are neither trained on by the warm
// start, which asks for more demonstrations than the file has, nor
// inspected by the cycles.
func TestProbeIsHeldOutOfTheWarmStart(t *testing.T) {
	dir := t.TempDir()
	file := writeSayExperts(t, dir, 6)
	cfg := sayConfig("implicit", 1)
	cfg.StepAgent.Expert, cfg.StepAgent.Probe, cfg.StepAgent.Trajectories = file, 2, 2
	cfg.WarmStart.Demos = 64
	var log strings.Builder
	err := rl.Train(context.Background(), cfg, rl.Options{ModelPath: byteModel(t), Dir: filepath.Join(dir, "run"),
		NewEnv: func() envs.Env { return &say{} }, Progress: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "warm start: 4 sequences") {
		t.Fatalf("want the warm start on the 4 conversations before the 2 of the probe; log:\n%s", log.String())
	}
	m := readMetrics(t, filepath.Join(dir, "run"))[0]
	if m.Metrics["steps"] != 4 || m.Metrics["probe_agreement"] != m.Metrics["step_agreement"] {
		t.Fatalf("cycle 1: %v inspected steps (want 2 conversations x 2), probe agreement %v, inspection %v",
			m.Metrics["steps"], m.Metrics["probe_agreement"], m.Metrics["step_agreement"])
	}
}

// TestDiscriminatorPretrainHoldsOutConversations: with an expert file the
// discriminator pre-trains on the file's last conversations before the
// probe's, which neither the warm start nor the cycles see; asking for as
// many as the probe leaves is an error before the warm start, which can
// take an hour.
func TestDiscriminatorPretrainHoldsOutConversations(t *testing.T) {
	dir := t.TempDir()
	cfg := sayConfig("irl", 1)
	cfg.StepAgent.JudgementToken, cfg.StepAgent.NegativeToken = "y", "n"
	cfg.StepAgent.Expert, cfg.StepAgent.Probe, cfg.StepAgent.DiscriminatorPretrain = writeSayExperts(t, dir, 6), 2, 4
	var log strings.Builder
	err := rl.Train(context.Background(), cfg, rl.Options{ModelPath: byteModel(t), Dir: filepath.Join(dir, "refused"),
		NewEnv: func() envs.Env { return &say{} }, Progress: &log})
	if err == nil || !strings.Contains(err.Error(), "stepagent.discriminator_pretrain 4: the expert file has 4 conversations besides the probe") {
		t.Fatalf("want an error naming stepagent.discriminator_pretrain and the 4 conversations left, got %v", err)
	}
	if strings.Contains(log.String(), "warm start:") {
		t.Fatalf("the warm start ran before the error; log:\n%s", log.String())
	}

	// 6 conversations: 2 for the probe, 2 for the pre-training, 2 for the
	// warm start (which asks for more) and the cycle.
	cfg.StepAgent.DiscriminatorPretrain, cfg.StepAgent.Trajectories = 2, 4
	cfg.WarmStart.Demos = 64
	log.Reset()
	err = rl.Train(context.Background(), cfg, rl.Options{ModelPath: byteModel(t), Dir: filepath.Join(dir, "run"),
		NewEnv: func() envs.Env { return &say{} }, Progress: &log})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"warm start: 2 sequences", "discriminator pre-training: 2 trajectories, 4 steps"} {
		if !strings.Contains(log.String(), want) {
			t.Fatalf("want %q in the log:\n%s", want, log.String())
		}
	}
	if m := readMetrics(t, filepath.Join(dir, "run"))[0]; m.Metrics["steps"] != 4 {
		t.Fatalf("cycle 1 inspected %v steps: want the 2 conversations left to it x 2", m.Metrics["steps"])
	}
}

// writeSayExperts writes an expert file of n conversations of the say
// environment into dir.
func writeSayExperts(t *testing.T, dir string, n int) string {
	line := `{"messages": [{"role": "system", "content": "Do as told. Answer with Action: WORD"}, {"role": "user", "content": "Say go."}, {"role": "assistant", "content": "Action: go"}, {"role": "user", "content": "Say stop."}, {"role": "assistant", "content": "Action: stop"}]}`
	file := filepath.Join(dir, "experts.jsonl")
	if err := os.WriteFile(file, []byte(strings.Repeat(line+"\n", n)), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
