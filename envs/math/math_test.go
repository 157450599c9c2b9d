package math

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envtest"
	"github.com/agentrl/agentrl/rollout"
)

func newEnv(t testing.TB, withCalc bool) *Env {
	t.Helper()
	var e envs.Env
	if withCalc {
		e = NewCalc()
	} else {
		e = New()
	}
	env, ok := e.(*Env)
	if !ok {
		t.Fatal("constructor does not return *Env")
	}
	return env
}

func TestSpecs(t *testing.T) {
	single, calc := newEnv(t, false).Spec(), newEnv(t, true).Spec()
	if single.Name != "math" || single.MaxSteps != 1 || single.RewardMin != 0 || single.RewardMax != 1 {
		t.Errorf("math spec %+v", single)
	}
	if calc.Name != "math-calc" || calc.MaxSteps != 8 || calc.RewardMin != 0 || calc.RewardMax != 1 {
		t.Errorf("math-calc spec %+v", calc)
	}
	if !strings.Contains(single.Instruction, "#### 72") || !strings.Contains(calc.Instruction, "Action: calc[") {
		t.Error("instructions lack example actions")
	}
}

// playExpert plays one episode with the expert and returns the trace and
// the last step.
func playExpert(t testing.TB, e *Env, split envs.Split, seed int64) (string, envs.StepResult) {
	t.Helper()
	obs, err := e.Reset(split, seed)
	if err != nil {
		t.Fatal(err)
	}
	trace, last := envtest.PlayExpert(t, e)
	return strings.Join(append([]string{obs}, trace...), "\n"), last
}

func TestExpertSolvesEverySplit(t *testing.T) {
	for _, withCalc := range []bool{false, true} {
		e := newEnv(t, withCalc)
		for _, split := range envs.Splits {
			const episodes = 300
			wins := 0
			for seed := range int64(episodes) {
				_, last := playExpert(t, e, split, seed)
				if last.Info.Success && last.Reward == 1 && last.Info.Score == 1 {
					wins++
				}
			}
			if wins != episodes {
				t.Errorf("%s %s: expert solved %d of %d", e.Spec().Name, split, wins, episodes)
			}
			t.Logf("%s %s: expert success %d/%d", e.Spec().Name, split, wins, episodes)
		}
	}
}

func TestExpertDemonstrationIsTheWorkedSolution(t *testing.T) {
	e := newEnv(t, false)
	if _, err := e.Reset(envs.Train, 4); err != nil {
		t.Fatal(err)
	}
	action, err := e.ExpertAction()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(action, "\n")
	if len(lines) != len(e.problem.steps)+1 || lines[len(lines)-1] != "#### "+strconv.FormatInt(e.problem.answer, 10) {
		t.Errorf("expert action is not the worked solution:\n%s", action)
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.Contains(l, "<<") {
			t.Errorf("solution line %q lacks its calculation", l)
		}
	}
}

// TestDemonstrationKeepsTheWorkedSolution: math reads the whole reply,
// so the demonstration of an expert episode (what supervised warm starts
// train on) is the worked solution, not its last line; math-calc's
// demonstrations are its actions in the "Action: " format.
func TestDemonstrationKeepsTheWorkedSolution(t *testing.T) {
	for _, calc := range []bool{false, true} {
		newEnv := New
		if calc {
			newEnv = NewCalc
		}
		trajs, err := rollout.Run(context.Background(), rollout.Config{NewEnv: newEnv, Episodes: 1, Split: envs.Train, Seed0: 4}, rollout.Expert())
		if err != nil || len(trajs) != 1 || !trajs[0].Success {
			t.Fatalf("calc %v: the expert's episode: %v", calc, err)
		}
		msgs := rollout.NewDemonstration(&trajs[0]).Messages
		first := msgs[2].Content
		switch {
		case !calc && (first != strings.TrimSpace(trajs[0].Steps[0].Action) || !strings.Contains(first, "<<") || !strings.Contains(first, "\n#### ")):
			t.Errorf("math demonstration %q: want the worked solution", first)
		case calc && !strings.HasPrefix(first, "Action: calc["):
			t.Errorf("math-calc demonstration %q: want Action: calc[...]", first)
		}
	}
}

func TestCalcExpertCalculatesEachStep(t *testing.T) {
	e := newEnv(t, true)
	trace, last := playExpert(t, e, envs.Test, 11)
	if got := strings.Count(trace, "] = "); got != len(e.problem.steps) {
		t.Errorf("expert made %d calculations for %d steps:\n%s", got, len(e.problem.steps), trace)
	}
	if !last.Info.Success {
		t.Errorf("expert failed:\n%s", trace)
	}
	// After the agent has used most of the steps, the expert answers in time.
	if _, err := e.Reset(envs.Test, 11); err != nil {
		t.Fatal(err)
	}
	for range CalcMaxSteps - 1 {
		if _, err := e.Step("calc[1+1]"); err != nil {
			t.Fatal(err)
		}
	}
	if action, _ := e.ExpertAction(); !strings.HasPrefix(action, "answer[") {
		t.Errorf("expert with one step left: %q, want an answer", action)
	}
}

// TestCalcExpertPlaysTheSolutionInOrder: on its own episodes the expert
// computes the solution's steps in order, one per action, then answers.
func TestCalcExpertPlaysTheSolutionInOrder(t *testing.T) {
	e := newEnv(t, true)
	for seed := range int64(200) {
		if _, err := e.Reset(envs.Train, seed); err != nil {
			t.Fatal(err)
		}
		for k := 0; ; k++ {
			action, err := e.ExpertAction()
			if err != nil {
				t.Fatal(err)
			}
			want := "answer[" + strconv.FormatInt(e.problem.answer, 10) + "]"
			if k < len(e.problem.steps) {
				want = "calc[" + e.problem.steps[k].expr + "]"
			}
			if action != want {
				t.Fatalf("seed %d, action %d: %q, want %q", seed, k+1, action, want)
			}
			res, err := e.Step(action)
			if err != nil {
				t.Fatal(err)
			}
			if res.Done {
				break
			}
		}
	}
}

// TestCalcExpertInAnAgentsState: the expert reads its progress from the
// results the episode's calculations gave, so in a state an agent
// reached it computes the step still missing: after a wrong calculation
// the same step again, after a right one written otherwise the next.
func TestCalcExpertInAnAgentsState(t *testing.T) {
	e := newEnv(t, true)
	seed := int64(0)
	for ; ; seed++ { // a problem of three steps or more
		if _, err := e.Reset(envs.Test, seed); err != nil {
			t.Fatal(err)
		}
		if len(e.problem.steps) >= 3 {
			break
		}
	}
	steps := e.problem.steps
	expect := func(when, want string) {
		t.Helper()
		if got, err := e.ExpertAction(); err != nil || got != want {
			t.Errorf("%s: expert %q (%v), want %q", when, got, err, want)
		}
	}
	wrong := strconv.FormatInt(steps[0].value+1, 10)
	if _, err := e.Step("calc[" + wrong + "]"); err != nil {
		t.Fatal(err)
	}
	expect("after a wrong calculation", "calc["+steps[0].expr+"]")
	if _, err := e.Step("calc[(" + steps[0].expr + ") * 1]"); err != nil {
		t.Fatal(err)
	}
	expect("after the first step written otherwise", "calc["+steps[1].expr+"]")
	for range CalcMaxSteps - 3 {
		if _, err := e.Step("calc[" + wrong + "]"); err != nil {
			t.Fatal(err)
		}
	}
	expect("with one action left", "answer["+strconv.FormatInt(e.problem.answer, 10)+"]")
}

func TestDeterministicEpisodes(t *testing.T) {
	for _, withCalc := range []bool{false, true} {
		a, b := newEnv(t, withCalc), newEnv(t, withCalc)
		for _, split := range envs.Splits {
			for seed := range int64(30) {
				ta, _ := playExpert(t, a, split, seed)
				tb, _ := playExpert(t, b, split, seed)
				if ta != tb {
					t.Fatalf("%s seed %d: runs differ", split, seed)
				}
			}
		}
	}
}

func TestSingleStepGrading(t *testing.T) {
	e := newEnv(t, false)
	cases := []struct {
		reply   string
		reward  float64
		valid   bool
		success bool
	}{
		{"#### {a}", 1, true, true},
		{"Let me think.\nThe total is {a}.\n#### {a}", 1, true, true},
		{"#### {a}.00", 1, true, true},
		{"#### ${a}", 1, true, true},
		{"The answer is {a}", 1, true, true},
		{"Action: #### {a}", 1, true, true},
		{"\\boxed{{a}}", 1, true, true},
		{"#### {a1}", 0, true, false},
		{"#### {a}.5", 0, true, false},
		{"#### {a}\n#### {a1}", 0, true, false},
		{"I don't know.", 0, false, false},
		{"", 0, false, false},
	}
	for _, c := range cases {
		if _, err := e.Reset(envs.Train, 21); err != nil {
			t.Fatal(err)
		}
		a := e.problem.answer
		reply := strings.NewReplacer("{a1}", strconv.FormatInt(a+1, 10), "{a}", strconv.FormatInt(a, 10)).Replace(c.reply)
		res, err := e.Step(reply)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reward != c.reward || res.Info.ValidAction != c.valid || res.Info.Success != c.success || !res.Done || res.Info.Score != c.reward {
			t.Errorf("%q: reward %v valid %v success %v done %v score %v (%s)", reply, res.Reward, res.Info.ValidAction, res.Info.Success, res.Done, res.Info.Score, res.Observation)
		}
		if _, err := e.Step(reply); err == nil {
			t.Errorf("%q: second step accepted", reply)
		}
	}
}

func TestCalcActions(t *testing.T) {
	e := newEnv(t, true)
	if _, err := e.Reset(envs.Train, 5); err != nil {
		t.Fatal(err)
	}
	a := strconv.FormatInt(e.problem.answer, 10)
	steps := []struct {
		action, observation string
		valid, done         bool
		reward              float64
	}{
		{"Action: calc[2 + 3 * 4]", "calc[2 + 3 * 4] = 14", true, false, 0},
		{"Thought: halve it.\nAction: CALC [ 7/2 ]", "= 3.5", true, false, 0},
		{"calc[1/0]", "division by zero", false, false, 0},
		{"calc[(1+2]", "missing )", false, false, 0},
		{"calc[2+3", "Invalid action", false, false, 0},
		{"search[apples]", "Invalid action", false, false, 0},
		{"answer[many]", "holds no number", false, false, 0},
		{"answer[" + a + "]", "Correct", true, true, 1},
	}
	for _, s := range steps {
		res, err := e.Step(s.action)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Observation, s.observation) || res.Info.ValidAction != s.valid || res.Done != s.done || res.Reward != s.reward {
			t.Errorf("%q: %q valid %v done %v reward %v", s.action, res.Observation, res.Info.ValidAction, res.Done, res.Reward)
		}
	}
	if _, err := e.Step("calc[1]"); err == nil {
		t.Error("step after the end accepted")
	}

	for _, final := range []struct {
		action string
		reward float64
	}{{"#### " + a, 1}, {"answer[" + a + "1]", 0}, {"answer[$" + a + ".0 apples]", 1}} {
		if _, err := e.Reset(envs.Train, 5); err != nil {
			t.Fatal(err)
		}
		res, err := e.Step(final.action)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Done || res.Reward != final.reward || res.Info.Score != final.reward {
			t.Errorf("%q: done %v reward %v score %v", final.action, res.Done, res.Reward, res.Info.Score)
		}
	}
}

func TestCalcEpisodeEndsAfterEightSteps(t *testing.T) {
	e := newEnv(t, true)
	if _, err := e.Reset(envs.Test, 2); err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= CalcMaxSteps; step++ {
		res, err := e.Step("calc[1+1]")
		if err != nil {
			t.Fatal(err)
		}
		if res.Done != (step == CalcMaxSteps) {
			t.Fatalf("step %d: done %v", step, res.Done)
		}
		if res.Done && (res.Reward != 0 || res.Info.Success || !strings.Contains(res.Observation, strconv.FormatInt(e.problem.answer, 10))) {
			t.Errorf("last step: reward %v success %v observation %q", res.Reward, res.Info.Success, res.Observation)
		}
	}
}

func TestGarbageActions(t *testing.T) {
	garbage := []string{"", "   ", "]]]][[[", "calc[", "calc]", "calc[[[", "answer[]", "Action:", "🧮🧮", "\xff\xfe\x00",
		strings.Repeat("9", 100000), "calc[" + strings.Repeat("(", 10000) + "]", "calc[" + strings.Repeat("9*", 5000) + "9]"}
	for _, withCalc := range []bool{false, true} {
		e := newEnv(t, withCalc)
		for _, g := range garbage {
			if _, err := e.Reset(envs.Train, 1); err != nil {
				t.Fatal(err)
			}
			res, err := e.Step(g)
			if err != nil {
				t.Fatalf("%.30q: %v", g, err)
			}
			if res.Reward != 0 || res.Observation == "" {
				t.Errorf("%s %.30q: reward %v observation %q", e.Spec().Name, g, res.Reward, res.Observation)
			}
			if withCalc && (res.Info.ValidAction || res.Done) {
				t.Errorf("math-calc %.30q: valid %v done %v", g, res.Info.ValidAction, res.Done)
			}
		}
	}
}

func TestRandomPolicyScoresLow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, withCalc := range []bool{false, true} {
		e := newEnv(t, withCalc)
		const episodes = 500
		wins := 0
		for seed := range int64(episodes) {
			if _, err := e.Reset(envs.Train, seed); err != nil {
				t.Fatal(err)
			}
			for {
				// A guesser that knows answers are whole numbers of the
				// usual size.
				action := fmt.Sprintf("#### %d", rng.IntN(200))
				if withCalc && rng.IntN(2) == 0 {
					action = fmt.Sprintf("calc[%d*%d]", rng.IntN(20), rng.IntN(20))
				}
				res, err := e.Step(action)
				if err != nil {
					t.Fatal(err)
				}
				if res.Done {
					if res.Info.Success {
						wins++
					}
					break
				}
			}
		}
		t.Logf("%s: random policy success %d/%d", e.Spec().Name, wins, episodes)
		if wins > episodes/20 {
			t.Errorf("%s: random policy solved %d of %d", e.Spec().Name, wins, episodes)
		}
	}
}

// FuzzCalcStep feeds arbitrary text to math-calc: it must never panic and
// must only reward a right answer.
func FuzzCalcStep(f *testing.F) {
	e := newEnv(f, true)
	f.Fuzz(func(t *testing.T, action string) {
		if _, err := e.Reset(envs.Unseen, 8); err != nil {
			t.Fatal(err)
		}
		res, err := e.Step(action)
		if err != nil {
			t.Fatal(err)
		}
		if res.Observation == "" {
			t.Error("empty observation")
		}
		if res.Reward != 0 && !res.Info.Success {
			t.Errorf("reward %v without success", res.Reward)
		}
		if res.Info.Success && !strings.Contains(action, strconv.FormatInt(e.problem.answer, 10)) {
			t.Errorf("%q solved a problem whose answer is %d", action, e.problem.answer)
		}
	})
}

// BenchmarkSteps: 64 instances of each variant stepped in parallel by
// their experts.
func BenchmarkSteps(b *testing.B) {
	b.Run("math", func(b *testing.B) { envtest.Benchmark(b, New) })
	b.Run("math-calc", func(b *testing.B) { envtest.Benchmark(b, NewCalc) })
}

// TestExampleActions checks the examples a random baseline draws from: all
// valid actions, and together a weak policy.
func TestExampleActions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, withCalc := range []bool{false, true} {
		e := newEnv(t, withCalc)
		const episodes = 500
		wins := 0
		for seed := range int64(episodes) {
			if _, err := e.Reset(envs.Test, seed); err != nil {
				t.Fatal(err)
			}
			for {
				examples := e.ExampleActions()
				if len(examples) == 0 {
					t.Fatalf("seed %d: no examples for %q", seed, e.problem.question)
				}
				res, err := e.Step("Action: " + examples[rng.IntN(len(examples))])
				if err != nil {
					t.Fatal(err)
				}
				if !res.Info.ValidAction && !strings.Contains(res.Observation, "division by zero") {
					t.Fatalf("example action invalid: %s", res.Observation)
				}
				if res.Done {
					if res.Info.Success {
						wins++
					}
					break
				}
			}
		}
		t.Logf("%s: random example actions solve %d/%d", e.Spec().Name, wins, episodes)
		if wins > episodes/10 {
			t.Errorf("%s: random example actions solve %d of %d", e.Spec().Name, wins, episodes)
		}
	}
}
