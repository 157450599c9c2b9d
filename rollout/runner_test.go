package rollout_test

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/rollout"
	"github.com/agentrl/agentrl/rollout/rollouttest"
)

func newGuess() envs.Env { return rollouttest.New() }

func TestExpertSolvesEveryEpisode(t *testing.T) {
	for _, split := range envs.Splits {
		t.Run(string(split), func(t *testing.T) {
			cfg := rollout.Config{NewEnv: newGuess, Parallel: 7, Episodes: 40, Split: split, Seed0: 100}
			trajs, err := rollout.Run(context.Background(), cfg, rollout.Expert())
			if err != nil {
				t.Fatal(err)
			}
			if len(trajs) != cfg.Episodes {
				t.Fatalf("got %d trajectories, want %d", len(trajs), cfg.Episodes)
			}
			size := map[envs.Split]int{envs.Train: 16, envs.Test: 16, envs.Unseen: 40}[split]
			for i, tr := range trajs {
				if tr.Seed != cfg.Seed0+int64(i) {
					t.Fatalf("trajectory %d has seed %d, want %d (ordered by seed)", i, tr.Seed, cfg.Seed0+int64(i))
				}
				if err := tr.Validate(); err != nil {
					t.Fatalf("seed %d: %v", tr.Seed, err)
				}
				if !tr.Success || tr.Return != 1 || tr.Score != 1 || tr.Truncated || tr.Error != "" {
					t.Fatalf("seed %d: expert failed: %+v", tr.Seed, tr)
				}
				if limit := bits.Len(uint(size)); tr.NumSteps > limit {
					t.Fatalf("seed %d: bisection took %d steps, more than %d", tr.Seed, tr.NumSteps, limit)
				}
				if tr.Env != rollouttest.Name || tr.Split != split || tr.Instruction == "" {
					t.Fatalf("seed %d: wrong metadata %q %q %q", tr.Seed, tr.Env, tr.Split, tr.Instruction)
				}
				if !strings.HasPrefix(tr.FinalObservation, "Correct") {
					t.Fatalf("seed %d: final observation %q", tr.Seed, tr.FinalObservation)
				}
			}
			s := rollout.Summarize(trajs)
			if s.SuccessRate != 1 || s.InvalidActionRate != 0 || s.Episodes != cfg.Episodes {
				t.Fatalf("summary %+v", s)
			}
		})
	}
}

// recorder is a policy that bisects from the conversation alone (so it needs
// no expert) and records the batches it is given.
type recorder struct {
	mu      sync.Mutex
	batches [][]rollout.Request
}

func (r *recorder) Act(_ context.Context, batch []rollout.Request) ([]rollout.Response, error) {
	r.mu.Lock()
	r.batches = append(r.batches, append([]rollout.Request(nil), batch...))
	r.mu.Unlock()
	out := make([]rollout.Response, len(batch))
	for i, req := range batch {
		out[i].Text = fmt.Sprintf("Thought: bisect.\nAction: guess[%d]", bisect(req.Messages))
		out[i].TokenIDs = []int32{int32(i), 7}
		out[i].LogProbs = []float32{-0.5, -0.25}
	}
	return out, nil
}

// bisect replays the feedback in msgs to find the next guess.
func bisect(msgs []chat.Message) int {
	var lo, hi int
	if _, err := fmt.Sscanf(msgs[1].Content, "The hidden number is between %d and %d.", &lo, &hi); err != nil {
		panic(fmt.Sprintf("unexpected first observation %q", msgs[1].Content))
	}
	for i := 3; i < len(msgs); i += 2 {
		var k int
		switch {
		case strings.HasSuffix(msgs[i].Content, "too low."):
			fmt.Sscanf(msgs[i].Content, "%d", &k)
			lo = k + 1
		case strings.HasSuffix(msgs[i].Content, "too high."):
			fmt.Sscanf(msgs[i].Content, "%d", &k)
			hi = k - 1
		}
	}
	return (lo + hi) / 2
}

func TestRequestsAreBatchedAcrossInstances(t *testing.T) {
	rec := &recorder{}
	cfg := rollout.Config{NewEnv: newGuess, Parallel: 5, Episodes: 23, Split: envs.Test}
	trajs, err := rollout.Run(context.Background(), cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	totalSteps := 0
	for _, tr := range trajs {
		if !tr.Success {
			t.Fatalf("seed %d: bisection from messages failed: %+v", tr.Seed, tr)
		}
		totalSteps += tr.NumSteps
		for _, s := range tr.Steps {
			if !reflect.DeepEqual(s.TokenIDs, []int32{s.TokenIDs[0], 7}) || !reflect.DeepEqual(s.LogProbs, []float32{-0.5, -0.25}) {
				t.Fatalf("token ids / logprobs not recorded: %v %v", s.TokenIDs, s.LogProbs)
			}
			if !strings.HasPrefix(s.ParsedAction, "guess[") || !strings.HasPrefix(s.Action, "Thought:") {
				t.Fatalf("action %q parsed as %q", s.Action, s.ParsedAction)
			}
		}
	}
	requests := 0
	for i, b := range rec.batches {
		requests += len(b)
		if len(b) > cfg.Parallel {
			t.Fatalf("batch %d has %d requests, more than %d instances", i, len(b), cfg.Parallel)
		}
		seen := map[envs.Env]bool{}
		for _, req := range b {
			if seen[req.Instance] {
				t.Fatalf("batch %d has two requests from one instance", i)
			}
			seen[req.Instance] = true
			if req.Env != rollouttest.Name || len(req.Available) != 16 {
				t.Fatalf("request metadata: %q, %d available", req.Env, len(req.Available))
			}
			if req.Messages[0].Role != chat.System || len(req.Messages)%2 != 0 {
				t.Fatalf("messages do not start with the system prompt and end with an observation: %+v", req.Messages)
			}
			for j := 1; j < len(req.Messages); j++ {
				want := chat.User
				if j%2 == 0 {
					want = chat.Assistant
				}
				if req.Messages[j].Role != want {
					t.Fatalf("message %d has role %q, want %q", j, req.Messages[j].Role, want)
				}
			}
		}
	}
	if requests != totalSteps {
		t.Fatalf("%d requests for %d steps", requests, totalSteps)
	}
	if len(rec.batches[0]) != cfg.Parallel {
		t.Fatalf("first batch has %d requests, want all %d instances", len(rec.batches[0]), cfg.Parallel)
	}
	// While episodes remain, every instance is busy, so batches are full;
	// at the end they shrink instead of waiting for finished instances.
	last := rec.batches[len(rec.batches)-1]
	if len(last) == cfg.Parallel {
		t.Fatalf("last batch is full (%d): finished instances were waited for", len(last))
	}
	// Only the steps after the last episode has started, at most one
	// episode long, may have partial batches.
	partial := 0
	for _, b := range rec.batches {
		if len(b) < cfg.Parallel {
			partial++
		}
	}
	if maxSteps := bits.Len(16); partial > maxSteps {
		t.Fatalf("%d partial batches in %d policy calls: instances waited while episodes remained", partial, len(rec.batches))
	}
}

func TestRunIsDeterministic(t *testing.T) {
	run := func() []rollout.Trajectory {
		cfg := rollout.Config{NewEnv: newGuess, Parallel: 6, Episodes: 30, Split: envs.Unseen, Seed0: 7}
		trajs, err := rollout.Run(context.Background(), cfg, rollout.NewRandom(3))
		if err != nil {
			t.Fatal(err)
		}
		return trajs
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same seeds and a seeded random policy differ")
	}
	if s := rollout.Summarize(a); s.SuccessRate == 0 || s.SuccessRate == 1 {
		t.Fatalf("random policy success rate %v: expected some but not all episodes solved", s.SuccessRate)
	}
}

func TestStepLimitTruncates(t *testing.T) {
	dance := rollout.PolicyFunc(func(_ context.Context, batch []rollout.Request) ([]rollout.Response, error) {
		out := make([]rollout.Response, len(batch))
		for i := range out {
			out[i].Text = "Action: dance"
		}
		return out, nil
	})
	for _, tc := range []struct{ maxSteps, want int }{{0, rollouttest.MaxSteps}, {3, 3}} {
		cfg := rollout.Config{NewEnv: newGuess, Parallel: 2, Episodes: 4, Split: envs.Train, MaxSteps: tc.maxSteps}
		if got := cfg.StepLimit(newGuess().Spec()); got != tc.want {
			t.Fatalf("max steps %d: StepLimit %d, want %d", tc.maxSteps, got, tc.want)
		}
		trajs, err := rollout.Run(context.Background(), cfg, dance)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trajs {
			if tr.NumSteps != tc.want || !tr.Truncated || tr.Success || tr.Return != 0 {
				t.Fatalf("max steps %d: got %d steps, truncated %v", tc.maxSteps, tr.NumSteps, tr.Truncated)
			}
			if err := tr.Validate(); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(tr.FinalObservation, `Invalid action "dance"`) {
				t.Fatalf("final observation %q", tr.FinalObservation)
			}
		}
		s := rollout.Summarize(trajs)
		if s.InvalidActionRate != 1 || s.MeanSteps != float64(tc.want) || s.SuccessRate != 0 {
			t.Fatalf("summary %+v", s)
		}
	}
}

// flaky wraps a Guess game and fails in the ways a remote environment can.
type flaky struct {
	*rollouttest.Guess
	failSeed  int64         // seed whose second step fails
	slowSeed  int64         // seed whose first step hangs
	slowFor   time.Duration // how long it hangs
	seed      int64
	steps     int
	closed    *atomic.Int32
	closeOnce sync.Once
}

func (f *flaky) Reset(split envs.Split, seed int64) (string, error) {
	f.seed, f.steps = seed, 0
	return f.Guess.Reset(split, seed)
}

func (f *flaky) Step(action string) (envs.StepResult, error) {
	f.steps++
	if f.seed == f.failSeed && f.steps == 2 {
		return envs.StepResult{}, errors.New("server answered 500")
	}
	if f.seed == f.slowSeed && f.steps == 1 {
		time.Sleep(f.slowFor)
	}
	return f.Guess.Step(action)
}

func (f *flaky) Close() error {
	f.closeOnce.Do(func() { f.closed.Add(1) })
	return nil
}

// multiStepSeed returns the first train seed from `from` on whose game the
// expert needs more than one step.
func multiStepSeed(t *testing.T, from int64) int64 {
	for seed := from; ; seed++ {
		g := rollouttest.New()
		if _, err := g.Reset(envs.Train, seed); err != nil {
			t.Fatal(err)
		}
		if g.Target() != 8 { // the expert's first guess on 1..16
			return seed
		}
	}
}

func TestEnvironmentFailureIsRecordedAndRunContinues(t *testing.T) {
	// Early seeds, so that every instance plays more episodes afterwards.
	failSeed := multiStepSeed(t, 0)
	slowSeed := failSeed + 1
	var made, closed atomic.Int32
	cfg := rollout.Config{
		NewEnv: func() envs.Env {
			made.Add(1)
			return &flaky{Guess: rollouttest.New(), failSeed: failSeed, slowSeed: slowSeed, slowFor: time.Second, closed: &closed}
		},
		Parallel:    3,
		Episodes:    12,
		Split:       envs.Train,
		StepTimeout: 100 * time.Millisecond,
	}
	start := time.Now()
	trajs, err := rollout.Run(context.Background(), cfg, rollout.Expert())
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 900*time.Millisecond {
		t.Fatalf("run took %v: the step timeout did not cut the slow step", elapsed)
	}
	for _, tr := range trajs {
		switch tr.Seed {
		case failSeed:
			if tr.Error != "step 2: server answered 500" || tr.NumSteps != 1 {
				t.Fatalf("seed %d: error %q after %d steps", tr.Seed, tr.Error, tr.NumSteps)
			}
		case slowSeed:
			if tr.Error != "step 1: timed out after 100ms" || tr.NumSteps != 0 {
				t.Fatalf("seed %d: error %q", tr.Seed, tr.Error)
			}
		default:
			if tr.Error != "" || !tr.Success {
				t.Fatalf("seed %d: %+v", tr.Seed, tr)
			}
		}
		if err := tr.Validate(); err != nil {
			t.Fatalf("seed %d: %v", tr.Seed, err)
		}
	}
	// Both failed instances were replaced; the one that failed outright and
	// the survivors were closed, the abandoned one not while its step ran,
	// but once it returned.
	if got := made.Load(); got != int32(cfg.Parallel)+2 {
		t.Fatalf("made %d instances, want %d", got, cfg.Parallel+2)
	}
	if got := closed.Load(); got != int32(cfg.Parallel)+1 {
		t.Fatalf("closed %d instances, want %d", got, cfg.Parallel+1)
	}
	for deadline := time.Now().Add(3 * time.Second); closed.Load() != int32(cfg.Parallel)+2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("closed %d instances 3s after the slow step, want %d: the abandoned instance was never closed", closed.Load(), cfg.Parallel+2)
		}
	}
	s := rollout.Summarize(trajs)
	if s.Errors != 2 || s.Episodes != 10 || s.SuccessRate != 1 {
		t.Fatalf("summary %+v", s)
	}
}

// lostExpert is the guessing game whose expert has no action at the
// second step of one seed's game.
type lostExpert struct {
	*rollouttest.Guess
	lostSeed int64
	seed     int64
	steps    int
}

func (l *lostExpert) Reset(split envs.Split, seed int64) (string, error) {
	l.seed, l.steps = seed, 0
	return l.Guess.Reset(split, seed)
}

func (l *lostExpert) Step(action string) (envs.StepResult, error) {
	l.steps++
	return l.Guess.Step(action)
}

func (l *lostExpert) ExpertAction() (string, error) {
	if l.seed == l.lostSeed && l.steps == 1 {
		return "", errors.New("no solution step left")
	}
	return l.Guess.ExpertAction()
}

// TestExpertFailureFailsOnlyItsEpisode: an expert with no action in one
// state fails that episode, keeping its earlier steps, and the instance
// plays on: neither the run nor the other episodes stop.
func TestExpertFailureFailsOnlyItsEpisode(t *testing.T) {
	lostSeed := multiStepSeed(t, 0)
	var made atomic.Int32
	cfg := rollout.Config{
		NewEnv: func() envs.Env {
			made.Add(1)
			return &lostExpert{Guess: rollouttest.New(), lostSeed: lostSeed}
		},
		Parallel: 2,
		Episodes: 8,
		Split:    envs.Train,
	}
	trajs, err := rollout.Run(context.Background(), cfg, rollout.Expert())
	if err != nil {
		t.Fatal(err)
	}
	if len(trajs) != cfg.Episodes {
		t.Fatalf("%d episodes, want %d", len(trajs), cfg.Episodes)
	}
	for _, tr := range trajs {
		if tr.Seed == lostSeed {
			if tr.Error != "step 2: expert: no solution step left" || tr.NumSteps != 1 || len(tr.Steps) != 1 {
				t.Fatalf("seed %d: error %q after %d steps", tr.Seed, tr.Error, tr.NumSteps)
			}
		} else if tr.Error != "" || !tr.Success {
			t.Fatalf("seed %d: %+v", tr.Seed, tr)
		}
		if err := tr.Validate(); err != nil {
			t.Fatalf("seed %d: %v", tr.Seed, err)
		}
	}
	if got := made.Load(); got != int32(cfg.Parallel) {
		t.Fatalf("made %d instances, want %d: the expert's failure is not the instance's", got, cfg.Parallel)
	}
}

func TestCancellationStopsTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	policy := rollout.PolicyFunc(func(ctx context.Context, batch []rollout.Request) ([]rollout.Response, error) {
		calls++
		if calls == 3 {
			cancel()
		}
		return rollout.Expert().Act(ctx, batch)
	})
	cfg := rollout.Config{NewEnv: newGuess, Parallel: 4, Episodes: 1000, Split: envs.Train}
	trajs, err := rollout.Run(ctx, cfg, policy)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if len(trajs) >= cfg.Episodes {
		t.Fatalf("%d episodes ran after cancellation", len(trajs))
	}
	for _, tr := range trajs {
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

// hanging is the guessing game whose steps hang on one seed until
// released, as a stuck remote environment's would.
type hanging struct {
	*rollouttest.Guess
	hangSeed int64
	entered  chan<- struct{}
	release  <-chan struct{}
	seed     int64
}

func (h *hanging) Reset(split envs.Split, seed int64) (string, error) {
	h.seed = seed
	return h.Guess.Reset(split, seed)
}

func (h *hanging) Step(action string) (envs.StepResult, error) {
	if h.seed == h.hangSeed {
		h.entered <- struct{}{}
		<-h.release
	}
	return h.Guess.Step(action)
}

// TestCancellationKeepsFinishedEpisodes: with no step timeout, an
// environment that hangs must not keep a cancelled run from returning,
// and the episode that had finished beside it is returned.
func TestCancellationKeepsFinishedEpisodes(t *testing.T) {
	quick := oneStepSeed(t)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	cfg := rollout.Config{
		NewEnv: func() envs.Env {
			return &hanging{Guess: rollouttest.New(), hangSeed: quick + 1, entered: entered, release: release}
		},
		Parallel: 2, Episodes: 2,
		Starts: []rollout.Start{{Split: envs.Train, Seed: quick}, {Split: envs.Train, Seed: quick + 1}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		trajs []rollout.Trajectory
		err   error
	}
	done := make(chan result, 1)
	go func() {
		trajs, err := rollout.Run(ctx, cfg, rollout.Expert())
		done <- result{trajs, err}
	}()
	<-entered
	time.Sleep(50 * time.Millisecond) // the quick episode's step ends meanwhile
	cancel()
	select {
	case r := <-done:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", r.err)
		}
		if len(r.trajs) != 1 || r.trajs[0].Seed != quick || !r.trajs[0].Success {
			t.Fatalf("%d trajectories returned (%+v), want the finished episode of seed %d", len(r.trajs), r.trajs, quick)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the cancelled run did not return within 3s: it waits for the hung environment")
	}
}

// oneStepSeed returns the first train seed whose game the expert's first
// guess wins.
func oneStepSeed(t *testing.T) int64 {
	for seed := int64(0); ; seed++ {
		g := rollouttest.New()
		if _, err := g.Reset(envs.Train, seed); err != nil {
			t.Fatal(err)
		}
		if g.Target() == 8 { // the expert's first guess on 1..16
			return seed
		}
	}
}

func TestPolicyFailuresStopTheRun(t *testing.T) {
	boom := errors.New("model crashed")
	for name, tc := range map[string]struct {
		policy rollout.Policy
		want   string
	}{
		"error": {rollout.PolicyFunc(func(context.Context, []rollout.Request) ([]rollout.Response, error) {
			return nil, boom
		}), "runner: policy: model crashed"},
		"short answer": {rollout.PolicyFunc(func(context.Context, []rollout.Request) ([]rollout.Response, error) {
			return []rollout.Response{{Text: "guess[1]"}}, nil
		}), "policy answered 3 requests with 1 responses"},
		"no expert": {rollout.Expert(), "expert policy: environment guess has no expert"},
	} {
		t.Run(name, func(t *testing.T) {
			newEnv := newGuess
			if name == "no expert" {
				newEnv = func() envs.Env { return struct{ envs.Env }{rollouttest.New()} }
			}
			cfg := rollout.Config{NewEnv: newEnv, Parallel: 3, Episodes: 9, Split: envs.Train}
			_, err := rollout.Run(context.Background(), cfg, tc.policy)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestConfigIsValidated(t *testing.T) {
	good := rollout.Config{NewEnv: newGuess, Episodes: 1, Split: envs.Train}
	for name, tc := range map[string]struct {
		edit func(*rollout.Config)
		want string
	}{
		"no factory":       {func(c *rollout.Config) { c.NewEnv = nil }, "no environment factory"},
		"zero episodes":    {func(c *rollout.Config) { c.Episodes = 0 }, "episodes must be positive"},
		"negative workers": {func(c *rollout.Config) { c.Parallel = -1 }, "parallel must not be negative"},
		"bad split":        {func(c *rollout.Config) { c.Split = "dev" }, `unknown split "dev"`},
		"negative steps":   {func(c *rollout.Config) { c.MaxSteps = -2 }, "max steps must not be negative"},
		"starts and episodes disagree": {func(c *rollout.Config) {
			c.Starts, c.Group = []rollout.Start{{Split: envs.Train}}, 2
		}, "1 starts x group 2 make 2 episodes, not the 1 asked for"},
		"bad start split": {func(c *rollout.Config) { c.Starts = []rollout.Start{{Split: "dev"}} }, `start 0: unknown split "dev"`},
	} {
		cfg := good
		tc.edit(&cfg)
		if _, err := rollout.Run(context.Background(), cfg, rollout.Expert()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", name, err, tc.want)
		}
	}
}

func TestRandomPolicyDrawsFromExamplesWhenActionsAreNotListed(t *testing.T) {
	cfg := rollout.Config{
		NewEnv:   func() envs.Env { return rollouttest.NewUnlisted() },
		Parallel: 2, Episodes: 20, Split: envs.Train,
	}
	trajs, err := rollout.Run(context.Background(), cfg, rollout.NewRandom(1))
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]bool{"guess[1]": true, "guess[8]": true, "guess[16]": true}
	for _, tr := range trajs {
		for _, s := range tr.Steps {
			if !examples[s.ParsedAction] || s.Action != "Action: "+s.ParsedAction {
				t.Fatalf("random action %q is not one of the examples", s.Action)
			}
		}
	}

	// Without ExampleActions, the instruction's example is the only shape.
	bare := rollout.Config{
		NewEnv:   func() envs.Env { return struct{ envs.Env }{rollouttest.NewUnlisted()} },
		Episodes: 2, Split: envs.Train,
	}
	trajs, err = rollout.Run(context.Background(), bare, rollout.NewRandom(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trajs {
		for _, s := range tr.Steps {
			if s.Action != "Action: guess[K]" {
				t.Fatalf("random action %q is not the instruction's example", s.Action)
			}
		}
	}

	silent := bare
	silent.NewEnv = func() envs.Env { return noExamples{rollouttest.NewUnlisted()} }
	_, err = rollout.Run(context.Background(), silent, rollout.NewRandom(1))
	if err == nil || !strings.Contains(err.Error(), "guess lists no available actions and gives no action examples") {
		t.Fatalf("got %v", err)
	}
}

// noExamples hides a game's action examples and its instruction's.
type noExamples struct{ envs.Env }

func (e noExamples) Spec() envs.Spec {
	s := e.Env.Spec()
	s.Instruction = "Guess the hidden number."
	return s
}

// unlimited is a game whose spec declares no step limit.
type unlimited struct{ envs.Env }

func (e unlimited) Spec() envs.Spec {
	s := e.Env.Spec()
	s.MaxSteps = 0
	return s
}

func TestStepLimitIsRequired(t *testing.T) {
	cfg := rollout.Config{NewEnv: func() envs.Env { return unlimited{rollouttest.New()} }, Episodes: 2, Split: envs.Train}
	trajs, err := rollout.Run(context.Background(), cfg, rollout.NewRandom(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trajs {
		if !strings.Contains(tr.Error, "declares no step limit") || tr.NumSteps != 0 {
			t.Fatalf("seed %d: %+v", tr.Seed, tr)
		}
	}
	cfg.MaxSteps = 4
	trajs, err = rollout.Run(context.Background(), cfg, rollout.NewRandom(1))
	if err != nil || trajs[0].Error != "" || trajs[0].NumSteps > 4 {
		t.Fatalf("with a configured limit: %v %+v", err, trajs[0])
	}
}

func TestStreamStopsWhenEmitFails(t *testing.T) {
	stop := errors.New("disk full")
	emitted := 0
	cfg := rollout.Config{NewEnv: newGuess, Parallel: 4, Episodes: 100, Split: envs.Train}
	err := rollout.Stream(context.Background(), cfg, rollout.Expert(), func(*rollout.Trajectory) error {
		emitted++
		if emitted == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || emitted != 3 {
		t.Fatalf("got %v after %d episodes", err, emitted)
	}
}

// TestStartsOpenEpisodesPartway starts episodes after opening actions:
// the runner takes them for the policy, which then sees them in its
// conversation and plays on.
func TestStartsOpenEpisodesPartway(t *testing.T) {
	seed := multiStepSeed(t, 40)
	g := rollouttest.New()
	if _, err := g.Reset(envs.Test, seed); err != nil {
		t.Fatal(err)
	}
	// Two wrong guesses open the episode: the bound below the target and
	// one above it where there is room.
	low := fmt.Sprintf("Action: guess[%d]", g.Target()-1)
	opening := []string{low}
	if g.Target() < 16 {
		opening = append(opening, fmt.Sprintf("Action: guess[%d]", g.Target()+1))
	}
	rec := &recorder{}
	var progress []int
	cfg := rollout.Config{NewEnv: newGuess, Parallel: 2, Episodes: 4, Group: 2,
		Starts:   []rollout.Start{{Split: envs.Test, Seed: seed, Actions: opening}, {Split: envs.Train, Seed: seed}},
		Progress: func(done int) { progress = append(progress, done) }}
	trajs, err := rollout.Run(context.Background(), cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(trajs) != 4 {
		t.Fatalf("%d trajectories, want 4", len(trajs))
	}
	if !reflect.DeepEqual(progress, []int{1, 2, 3, 4}) {
		t.Errorf("progress %v, want 1 to 4", progress)
	}
	// In the order of the starts, each start's samples together.
	for i, tr := range trajs {
		if want := cfg.Starts[i/2].Split; tr.Split != want || tr.Sample != i%2 {
			t.Errorf("trajectory %d: %s sample %d, want %s sample %d", i, tr.Split, tr.Sample, want, i%2)
		}
	}
	for _, tr := range trajs {
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		if !tr.Success || tr.Error != "" {
			t.Errorf("%s seed %d: success %v, error %q", tr.Split, tr.Seed, tr.Success, tr.Error)
		}
		want := 0
		if tr.Split == envs.Test {
			want = len(opening)
		}
		for i, s := range tr.Steps {
			if s.Replayed != (i < want) {
				t.Errorf("%s step %d: replayed %v, want %v", tr.Split, i+1, s.Replayed, i < want)
			}
			if i < want && s.Action != opening[i] {
				t.Errorf("opening step %d took %q, want %q", i+1, s.Action, opening[i])
			}
		}
	}
	// The policy's first request of an opened episode carries the
	// opening: the system message, then an observation and an action per
	// opening step, then the observation to act on.
	var sawOpened bool
	for _, b := range rec.batches {
		for _, req := range b {
			if len(req.Messages) == 2+2*len(opening) && req.Messages[2].Content == low {
				sawOpened = true
			}
		}
	}
	if !sawOpened {
		t.Error("no request showed the opening actions in its conversation")
	}

	// An opening that the episode does not survive, or that the step
	// limit cannot hold, fails its episode with a reason.
	win := fmt.Sprintf("Action: guess[%d]", g.Target())
	for _, tc := range []struct {
		actions  []string
		maxSteps int
		want     string
	}{
		{[]string{win, low}, 0, "the episode ended at opening action 1 of 2"},
		{[]string{low, low, low}, 2, "3 opening actions exceed the step limit of 2"},
	} {
		cfg := rollout.Config{NewEnv: newGuess, Episodes: 1, MaxSteps: tc.maxSteps, Starts: []rollout.Start{{Split: envs.Test, Seed: seed, Actions: tc.actions}}}
		trajs, err := rollout.Run(context.Background(), cfg, rec)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(trajs[0].Error, tc.want) {
			t.Errorf("opening %q: error %q, want %q", tc.actions, trajs[0].Error, tc.want)
		}
	}
}
