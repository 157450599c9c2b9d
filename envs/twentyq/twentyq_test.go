package twentyq

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envtest"
)

func newEnv(t testing.TB) *Env {
	t.Helper()
	e, ok := New().(*Env)
	if !ok {
		t.Fatal("New does not return *Env")
	}
	return e
}

// playExpert plays one episode with the expert and returns its observations
// and the final step.
func playExpert(t testing.TB, e *Env, split envs.Split, seed int64) ([]string, envs.StepResult) {
	t.Helper()
	obs, err := e.Reset(split, seed)
	if err != nil {
		t.Fatal(err)
	}
	trace, last := envtest.PlayExpert(t, e)
	return append([]string{obs}, trace...), last
}

func TestSpec(t *testing.T) {
	s := newEnv(t).Spec()
	if s.Name != "twentyq" || s.MaxSteps != 20 || s.RewardMin != -20 || s.RewardMax != 0 || len(s.Splits) != 3 {
		t.Errorf("spec %+v", s)
	}
	if !strings.Contains(s.Instruction, "Action: Is it an animal?") {
		t.Error("instruction lacks an example action")
	}
}

func TestResetIsDeterministic(t *testing.T) {
	a, b := newEnv(t), newEnv(t)
	for _, split := range envs.Splits {
		for seed := int64(0); seed < 20; seed++ {
			ta, _ := playExpert(t, a, split, seed)
			tb, _ := playExpert(t, b, split, seed)
			if strings.Join(ta, "\n") != strings.Join(tb, "\n") {
				t.Fatalf("%s seed %d: two runs differ", split, seed)
			}
		}
	}
}

func TestSeedsAndSplitsGiveDifferentObjects(t *testing.T) {
	e := newEnv(t)
	owner := map[int]envs.Split{}
	for _, split := range envs.Splits {
		n := len(e.kb.pools[split])
		for seed := range int64(n) {
			if _, err := e.Reset(split, seed); err != nil {
				t.Fatal(err)
			}
			if prev, dup := owner[e.target]; dup {
				t.Fatalf("%s seed %d repeats %s, already a target in %s", split, seed, e.kb.objects[e.target].name, prev)
			}
			owner[e.target] = split
		}
	}
	if _, err := e.Reset(envs.Train, -3); err != nil {
		t.Errorf("negative seed: %v", err)
	}
	if _, err := e.Reset("validation", 0); err == nil {
		t.Error("unknown split accepted")
	}
}

// TestExpertFindsEveryObject plays every object of every split.
func TestExpertFindsEveryObject(t *testing.T) {
	e := newEnv(t)
	for _, split := range envs.Splits {
		turns := 0
		n := len(e.kb.pools[split])
		for seed := range int64(n) {
			_, last := playExpert(t, e, split, seed)
			if !last.Info.Success {
				t.Errorf("%s seed %d: expert failed to find %s", split, seed, e.kb.objects[e.target].name)
			}
			turns += e.turns
		}
		t.Logf("%s: %d objects, expert success 100%%, mean return %.2f", split, n, -float64(turns-n)/float64(n))
	}
}

func TestExpertSuccessRate(t *testing.T) {
	e := newEnv(t)
	for _, split := range envs.Splits {
		wins, total := 0, 0.0
		const episodes = 200
		for seed := range int64(episodes) {
			_, last := playExpert(t, e, split, seed+1000)
			if last.Info.Success {
				wins++
			}
			total += last.Info.Score
		}
		if wins < episodes {
			t.Errorf("%s: expert won %d of %d", split, wins, episodes)
		}
		t.Logf("%s: expert success %d/%d, mean return %.2f", split, wins, episodes, total/episodes)
	}
}

// TestExpertContinuesAfterAgentQuestions checks that the expert takes into
// account what the agent has already asked.
func TestExpertContinuesAfterAgentQuestions(t *testing.T) {
	e := newEnv(t)
	rng := rand.New(rand.NewPCG(7, 7))
	for seed := range int64(100) {
		if _, err := e.Reset(envs.Test, seed); err != nil {
			t.Fatal(err)
		}
		for range 6 {
			q := e.kb.props[rng.IntN(len(e.kb.props))].question
			if _, err := e.Step(q); err != nil {
				t.Fatal(err)
			}
		}
		for {
			action, err := e.ExpertAction()
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Step(action)
			if err != nil {
				t.Fatal(err)
			}
			if res.Done {
				if !res.Info.Success {
					t.Errorf("seed %d: expert did not find %s after 6 agent questions", seed, e.kb.objects[e.target].name)
				}
				break
			}
		}
	}
}

func TestRandomPolicyScoresLow(t *testing.T) {
	e := newEnv(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const episodes = 300
	wins, total := 0, 0.0
	for seed := range int64(episodes) {
		if _, err := e.Reset(envs.Train, seed); err != nil {
			t.Fatal(err)
		}
		for {
			var action string
			if rng.IntN(2) == 0 {
				action = e.kb.props[rng.IntN(len(e.kb.props))].question
			} else {
				action = e.kb.objects[rng.IntN(len(e.kb.objects))].guessText()
			}
			res, err := e.Step(action)
			if err != nil {
				t.Fatal(err)
			}
			if res.Done {
				total += res.Info.Score
				if res.Info.Success {
					wins++
				}
				break
			}
		}
	}
	mean := total / episodes
	t.Logf("random policy: success %d/%d, mean return %.2f", wins, episodes, mean)
	if float64(wins)/episodes > 0.1 || mean > -18 {
		t.Errorf("random policy scores too well: success %d/%d, mean return %.2f", wins, episodes, mean)
	}
}

func TestRewards(t *testing.T) {
	e := newEnv(t)
	if _, err := e.Reset(envs.Train, 0); err != nil {
		t.Fatal(err)
	}
	target := e.kb.objects[e.target]
	wrong := e.kb.objects[(e.target+1)%len(e.kb.objects)]

	steps := []struct {
		action  string
		reward  float64
		valid   bool
		done    bool
		success bool
	}{
		{"Is it alive?", -1, true, false, false},
		{wrong.guessText(), -1, true, false, false},
		{"Guess: unicorn", -1, true, false, false},
		{"What is it?", -1, false, false, false},
		{"Thought: I know. Action: " + target.guessText(), 0, true, true, true},
	}
	for _, s := range steps {
		res, err := e.Step(s.action)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reward != s.reward || res.Info.ValidAction != s.valid || res.Done != s.done || res.Info.Success != s.success {
			t.Errorf("%q: reward %v valid %v done %v success %v (%q)", s.action, res.Reward, res.Info.ValidAction, res.Done, res.Info.Success, res.Observation)
		}
		if res.Done && res.Info.Score != -4 {
			t.Errorf("final score %v, want the return -4", res.Info.Score)
		}
	}
	if _, err := e.Step("Is it alive?"); err == nil {
		t.Error("step after the end: no error")
	}
	if _, err := e.ExpertAction(); err == nil {
		t.Error("expert action after the end: no error")
	}

	if _, err := e.Reset(envs.Train, 0); err != nil {
		t.Fatal(err)
	}
	if res, _ := e.Step(target.guessText()); res.Reward != 0 || !res.Done || res.Info.Score != 0 {
		t.Errorf("first-turn guess: reward %v done %v score %v, want 0 true 0", res.Reward, res.Done, res.Info.Score)
	}
}

func TestEpisodeEndsAfterTwentyTurns(t *testing.T) {
	e := newEnv(t)
	if _, err := e.Reset(envs.Test, 5); err != nil {
		t.Fatal(err)
	}
	for turn := 1; turn <= MaxTurns; turn++ {
		res, err := e.Step("Is it alive?")
		if err != nil {
			t.Fatal(err)
		}
		if res.Done != (turn == MaxTurns) {
			t.Fatalf("turn %d: done %v", turn, res.Done)
		}
		// An episode cut here by a step limit scores what it cost.
		if res.Info.Score != -float64(turn) {
			t.Fatalf("turn %d: score %v, want the return so far %d", turn, res.Info.Score, -turn)
		}
		if res.Done {
			if res.Info.Score != -MaxTurns || res.Info.Success {
				t.Errorf("final score %v success %v, want -20 false", res.Info.Score, res.Info.Success)
			}
			if !strings.Contains(res.Observation, e.kb.objects[e.target].name) {
				t.Errorf("last observation %q does not reveal the object", res.Observation)
			}
		}
	}
}

func TestInvalidActions(t *testing.T) {
	e := newEnv(t)
	garbage := []string{
		"", "   ", "\n\n", "Action:", "]]]][[[", "((((", "Is it a 🐱🐶?", "ÿÿÿ\x00\xff\xfe",
		strings.Repeat("a", 100000), strings.Repeat("Is it red? ", 10000), "How big is it?",
		"Is it bigger than a cat?", "Is it a cat or a dog?", "Action: Action: Action:",
	}
	for _, g := range garbage {
		if _, err := e.Reset(envs.Train, 1); err != nil {
			t.Fatal(err)
		}
		res, err := e.Step(g)
		if err != nil {
			t.Fatalf("%.40q: %v", g, err)
		}
		if res.Info.ValidAction || res.Reward != -1 || res.Done || res.Observation == "" {
			t.Errorf("%.40q: valid %v reward %v done %v obs %q", g, res.Info.ValidAction, res.Reward, res.Done, res.Observation)
		}
		if e.turns != 1 {
			t.Errorf("%.40q: invalid action did not count as a turn", g)
		}
	}
}

func TestStepBeforeReset(t *testing.T) {
	if _, err := newEnv(t).Step("Is it alive?"); err == nil {
		t.Error("step before reset: no error")
	}
}

// FuzzStep feeds arbitrary text to the oracle: it must never panic, and
// every step must count and cost a point unless it wins.
func FuzzStep(f *testing.F) {
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, action string) {
		if _, err := e.Reset(envs.Train, 3); err != nil {
			t.Fatal(err)
		}
		res, err := e.Step(action)
		if err != nil {
			t.Fatal(err)
		}
		if res.Observation == "" {
			t.Error("empty observation")
		}
		if res.Info.Success != (res.Reward == 0) || res.Info.Success != res.Done {
			t.Errorf("reward %v success %v done %v", res.Reward, res.Info.Success, res.Done)
		}
		if !res.Info.ValidAction && res.Info.Success {
			t.Error("invalid action won")
		}
	})
}

// BenchmarkSteps: 64 instances stepped in parallel by their experts.
func BenchmarkSteps(b *testing.B) {
	envtest.Benchmark(b, New)
}

func TestExampleActionsAreValid(t *testing.T) {
	e := newEnv(t)
	examples := e.ExampleActions()
	if len(examples) != len(e.kb.props)+len(e.kb.objects) {
		t.Fatalf("%d examples, want every question and every guess", len(examples))
	}
	for _, a := range examples {
		if _, err := e.Reset(envs.Train, 0); err != nil {
			t.Fatal(err)
		}
		if res, err := e.Step("Action: " + a); err != nil || !res.Info.ValidAction {
			t.Errorf("example %q: %v %q", a, err, res.Observation)
		}
	}
	examples[0] = "changed"
	if e.ExampleActions()[0] == "changed" {
		t.Error("ExampleActions shares its slice with the caller")
	}
}
