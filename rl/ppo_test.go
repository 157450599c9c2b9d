package rl

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm/train"
)

func TestValueProbesAtActionStarts(t *testing.T) {
	e := ActionSequence{
		Sequence: train.Sequence{Tokens: []int32{1, 2, 3, 4, 5, 6, 7}, Weights: []float32{0, 0, 1, 1, 0, 0, 1}},
		Actions:  []ActionSpan{{Step: 0, Start: 2, End: 4}, {Step: 1, Start: 6, End: 7}},
	}
	yes, no, err := valueProbes(e, 99, 98)
	if err != nil {
		t.Fatal(err)
	}
	wantW := []float32{0, 0, 1, 0, 0, 0, 1}
	for k, s := range []train.Sequence{yes, no} {
		token := []int32{99, 98}[k]
		for i := range wantW {
			if s.Weights[i] != wantW[i] || (wantW[i] == 1) != (s.Targets[i] == token) {
				t.Fatalf("probe %d: weights %v, targets %v", k, s.Weights, s.Targets)
			}
		}
	}
	if !train.SameContext(yes, no) {
		t.Fatal("the two probes of a value have different contexts: the trainer would compute them twice")
	}
	// Probes must rise within the tokens (the first predicts nothing).
	for _, at := range [][]int{{0}, {7}, {6, 2}, {2, 2}} {
		if _, _, err := ProbePair(e.Tokens, at, 99, 98); err == nil || !strings.Contains(err.Error(), "positions must rise within 1..6") {
			t.Errorf("probes at %v: %v", at, err)
		}
	}
}

// TestLogOddsCrossEntropy checks the judgement loss on hand-computed
// log-odds, with one probe in one pair and two in the other, and its
// gradient against finite differences.
func TestLogOddsCrossEntropy(t *testing.T) {
	seqs := []train.Sequence{
		{Tokens: []int32{1, 2, 3, 4}, Weights: []float32{0, 1, 0, 1}},
		{Tokens: []int32{1, 2, 3, 4}, Weights: []float32{0, 1, 0, 1}},
		{Tokens: []int32{1, 2, 3}, Weights: []float32{0, 0, 1}},
		{Tokens: []int32{1, 2, 3}, Weights: []float32{0, 0, 1}},
	}
	logp := [][]float32{{0, -1, 0, -3}, {0, -2, 0, -1}, {0, 0, -0.5}, {0, 0, -0.25}}
	loss := LogOddsCrossEntropy{Pairs: []train.Pair{{Chosen: 0, Rejected: 1}, {Chosen: 2, Rejected: 3}}, Labels: [][]float64{{1, 0.75}, {0}}}
	zeros := func() [][]float32 {
		return [][]float32{make([]float32, 4), make([]float32, 4), make([]float32, 3), make([]float32, 3)}
	}
	grad := zeros()
	got, m, err := loss.Eval(seqs, logp, grad)
	if err != nil {
		t.Fatal(err)
	}
	// Probes: z = 1, label 1: softplus(-1); z = -2, label 0.75 (on the
	// wrong side): 0.75 softplus(2) + 0.25 softplus(-2); z = -0.25, label 0:
	// softplus(-0.25).
	sp := func(x float64) float64 { return math.Log1p(math.Exp(x)) }
	want := (sp(-1) + 0.75*sp(2) + 0.25*sp(-2) + sp(-0.25)) / 3
	wantAbs := (1 - sigmoid(1) + math.Abs(sigmoid(-2)-0.75) + sigmoid(-0.25)) / 3
	if math.Abs(got-want) > 1e-9 || math.Abs(m["accuracy"]-2.0/3) > 1e-9 || math.Abs(m["abs_error"]-wantAbs) > 1e-9 {
		t.Fatalf("loss %g (want %g), metrics %v (want accuracy 2/3, abs_error %g)", got, want, m, wantAbs)
	}
	// What it divides by, and so what its micro-batch weighs in a step.
	if n := loss.Targets(seqs); n != 3 {
		t.Errorf("the loss counts %g targets, want its 3 probes", n)
	}
	for s := range seqs {
		for i, w := range seqs[s].Weights {
			if w == 0 {
				if grad[s][i] != 0 {
					t.Errorf("sequence %d: gradient %g outside the probes at %d", s, grad[s][i], i)
				}
				continue
			}
			const h = 1e-3
			orig := logp[s][i]
			logp[s][i] = orig + h
			up, _, _ := loss.Eval(seqs, logp, zeros())
			logp[s][i] = orig - h
			down, _, _ := loss.Eval(seqs, logp, zeros())
			logp[s][i] = orig
			if fd := (up - down) / (2 * h); math.Abs(fd-float64(grad[s][i])) > 1e-4 {
				t.Errorf("sequence %d position %d: gradient %g, finite difference %g", s, i, grad[s][i], fd)
			}
		}
	}
	odds, err := LogOdds(seqs, logp, loss.Pairs)
	if err != nil || len(odds) != 2 || odds[0][0] != 1 || odds[0][1] != -2 || odds[1][0] != -0.25 {
		t.Fatalf("log-odds %v, %v", odds, err)
	}

	// The two probes of a judgement must be at the same positions, and
	// each probe needs its label.
	bad := []train.Sequence{seqs[0], {Tokens: []int32{1, 2, 3, 4}, Weights: []float32{0, 0, 1, 1}}}
	if _, _, err := (LogOddsCrossEntropy{Pairs: []train.Pair{{Chosen: 0, Rejected: 1}}, Labels: [][]float64{{1, 0}}}).Eval(bad, logp[:2], zeros()[:2]); err == nil || !strings.Contains(err.Error(), "different positions") {
		t.Errorf("probes at different positions: %v", err)
	}
	if _, _, err := (LogOddsCrossEntropy{Pairs: loss.Pairs, Labels: [][]float64{{1}, {0}}}).Eval(seqs, logp, zeros()); err == nil || !strings.Contains(err.Error(), "2 probes and 1 labels") {
		t.Errorf("a missing label: %v", err)
	}

	// Offsets shift each probe's log-odds: offsets equal to them leave
	// every probe at D = 1/2, so ln 2 each and half the gradient's sign.
	offset := loss
	offset.Offsets = [][]float64{{1, -2}, {-0.25}}
	grad = zeros()
	got, _, err = offset.Eval(seqs, logp, grad)
	if err != nil || math.Abs(got-math.Ln2) > 1e-9 {
		t.Fatalf("with offsets equal to the log-odds: loss %g, want ln 2 (%v)", got, err)
	}
	if g := float64(grad[0][1]); math.Abs(g-(0.5-1)/3) > 1e-7 {
		t.Errorf("gradient at the first probe %g, want (1/2 - 1)/3", g)
	}
	offset.Offsets = [][]float64{{1}, {0}}
	if _, _, err := offset.Eval(seqs, logp, zeros()); err == nil || !strings.Contains(err.Error(), "offset rows") {
		t.Errorf("an offset row short of its probes: %v", err)
	}
}

// TestReturnScale maps returns onto the critic's probabilities and back
// for twenty questions' bounds, puts a penalised return beyond them at the
// nearer bound, and refuses bounds that map nothing.
func TestReturnScale(t *testing.T) {
	s, err := newReturnScale(envs.Spec{Name: "twentyq", RewardMin: -20, RewardMax: 0})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ret, p float64 }{{-20, 0}, {0, 1}, {-5, 0.75}, {-20.3, 0}, {0.5, 1}} {
		if got := s.target(c.ret); math.Abs(got-c.p) > 1e-12 {
			t.Errorf("target(%g) = %g, want %g", c.ret, got, c.p)
		}
	}
	if got := s.value(0.75); math.Abs(got+5) > 1e-12 {
		t.Errorf("value(0.75) = %g, want -5", got)
	}
	for _, b := range [][2]float64{{0, 0}, {1, 0}, {math.Inf(-1), 0}, {0, math.NaN()}} {
		if _, err := newReturnScale(envs.Spec{Name: "bad", RewardMin: b[0], RewardMax: b[1]}); err == nil || !strings.Contains(err.Error(), "reward_min below reward_max") {
			t.Errorf("bounds %v: want refused, got %v", b, err)
		}
	}
}

// TestPPOChecksBeforeTheWarmStart: a value token that is not one token
// of the model, or an environment that declares no range of returns, is
// an error before the warm start trains, not after it.
func TestPPOChecksBeforeTheWarmStart(t *testing.T) {
	for _, c := range []struct {
		name, valueToken, want string
		env                    func() envs.Env
	}{
		{"a value token of two tokens", "yes please", "ppo.value_token", func() envs.Env { return &letters{} }},
		{"no range of returns", "y", "declares episode returns from 0 to 0", func() envs.Env { return &unbounded{} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := lettersConfig("ppo", 1)
			cfg.WarmStart = SFTConfig{Demos: 4, Epochs: 1, LR: 1e-3, BatchTokens: 256}
			cfg.PPO.ValueToken, cfg.PPO.NegativeToken = c.valueToken, "n"
			dir := t.TempDir()
			err := Train(context.Background(), cfg, Options{ModelPath: byteModel(t), Dir: dir, NewEnv: c.env})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error naming %q, got %v", c.want, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "adapters", "warm_start.gguf")); err == nil {
				t.Fatal("the warm start trained before the check")
			}
		})
	}
}

// unbounded is the letters task with no declared range of returns.
type unbounded struct{ letters }

func (u *unbounded) Spec() envs.Spec {
	s := u.letters.Spec()
	s.RewardMax = 0
	return s
}

// TestPPORaisesReward trains the byte model on the vowel task with PPO:
// the reward must rise over the run (a line fitted through the
// iterations' rewards, as TestGRPORaisesReward does) and the critic must
// learn the values: its error on the λ-returns falls.
func TestPPORaisesReward(t *testing.T) {
	const iterations = 20
	cfg := lettersConfig("ppo", iterations)
	cfg.Rollout.Tasks = 32 // PPO plays one episode a task: 32 a iteration, as GRPO's 4 x 8
	cfg.PPO.LR, cfg.PPO.CriticLR, cfg.PPO.Epochs, cfg.PPO.Minibatches = 2e-2, 1e-2, 1, 1
	// The byte model has no " Yes" token: judgement tokens of its own.
	cfg.PPO.ValueToken, cfg.PPO.NegativeToken = "y", "n"
	ms := trainedMetrics(t, cfg, byteModel(t), func() envs.Env { return &letters{} })
	var xs, rewards, valueErrors []float64
	for _, m := range ms {
		t.Logf("iter %d reward %.3f value %.3f value error %.3f policy loss %.4f critic loss %.4f", m.Iteration, m.Reward,
			m.Metrics["value"], m.Metrics["value_error"], m.Losses["policy"], m.Losses["critic"])
		xs = append(xs, float64(m.Iteration))
		rewards = append(rewards, m.Reward)
		valueErrors = append(valueErrors, m.Metrics["value_error"])
	}
	gain, tStat := trend(xs, rewards)
	firstErr, lastErr := stat.Mean(valueErrors[:3], nil), stat.Mean(valueErrors[iterations-3:], nil)
	t.Logf("reward trend: %.3f gained over the run (slope %.1f standard errors above zero); critic error %.3f -> %.3f", gain, tStat, firstErr, lastErr)
	if gain < 0.1 || tStat < 2 {
		t.Errorf("PPO did not raise the reward: fitted gain %.3f over the run (want >= 0.1), slope %.1f standard errors (want >= 2)", gain, tStat)
	}
	if lastErr > 0.75*firstErr {
		t.Errorf("the critic did not learn the values: mean |V - return| %.3f in the first three iterations, %.3f in the last three", firstErr, lastErr)
	}
	if final := ms[iterations-1]; final.GradSteps != int64(2*cfg.PPO.Epochs*iterations) || final.EnvSteps != iterations*32 {
		t.Errorf("counters: %d grad steps (actor and critic), %d env steps", final.GradSteps, final.EnvSteps)
	}
}
