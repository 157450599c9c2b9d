package math

import (
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/envtest"
)

func TestCanonicalSingle(t *testing.T) {
	e := newEnv(t, false)
	same := map[string][]string{
		"#### 1000": {"#### 1000", "#### 1,000", "#### 1000.0", "####1000.00", "#### $1,000",
			"She earns 500 + 500 = 1000 dollars.\n#### 1000", `The answer is \boxed{1,000}.`, "so the total is $1,000.",
			// The whole reply is graded, not only the text after "Action:".
			"Thought: 250 * 4 = 1000.\nAction: #### 1000", "#### 1000\nAction: I think it is 7"},
		"#### -5":  {"#### -5", "#### -5.0", "#### -$5"},
		"#### 0":   {"#### 0", "#### -0", "#### 0.000"},
		"#### 0.5": {"#### 0.50", "#### 00.5", "#### .5", "#### $.50"},
	}
	differ := [][2]string{
		{"#### 1000", "#### 100"},
		{"#### 1000", "#### 1000.5"},
		{"#### 5", "#### -5"},
		// ".5" is a half, as the calculator reads it, not 5.
		{"#### 5", "#### .5"},
		{"#### -0.5", "#### .5"},
		// After the last "####" comes first; "Action:" does not cut the reply.
		{"#### 5\nAction: 7", "Action: 7"},
		// Replies without a number are invalid and stay themselves.
		{"I don't know", "no idea"},
	}
	envtest.CheckCanonical(t, e, same, differ)
	for _, invalid := range []string{"  I don't know.  ", "Thought: no numbers here\nAction: pass"} {
		if got, want := e.Canonical(invalid), strings.TrimSpace(invalid); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", invalid, got, want)
		}
	}
}

func TestCanonicalCalc(t *testing.T) {
	e := newEnv(t, true)
	same := map[string][]string{
		"calc[48/2]": {"calc[48/2]", "calc[ 48 / 2 ]", "CALC[48 ÷ 2]", "calculate[48/2]", "Calculator [48 / 2]",
			"calc[$48/2]", "calc[048/2.0]", "Thought: half of 48.\nAction: calc[48 / 2]", "Action: `calc[48/+2]`"},
		"calc[(48+24)*3]": {"calc[(48 + 24) * 3]", "calc[(48+24)x3]", "calc[(48 + 24) × 3]", "calc[(48+24)·3]", "calc[(+48 + 24) X 3]"},
		"calc[1200-3.5%]": {"calc[1,200 − 3.50 %]", "calc[1200\t-\t3.5%]"},
		"calc[-.5*-2]":    {"calc[-0.5 * -2]", "calc[−0.50*−2.]"},
		"calc[2+3]":       {"calc[+2 + +3]"},
		"answer[72]": {"answer[72]", "Answer[ 72 ]", "answer[72.0]", "finish[72]", "#### 72", "####72 apples",
			"answer[It is 72.]", "Thought: done.\nAction: answer[$72]"},
		"answer[1000]": {"answer[1,000]", "#### 1,000.00"},
	}
	differ := [][2]string{
		{"calc[48/2]", "calc[24]"}, // the observation shows the expression
		{"calc[2+3+4]", "calc[2+(3+4)]"},
		{"calc[2*3]", "calc[3*2]"},
		{"calc[--2]", "calc[2]"},
		{"answer[72]", "answer[73]"},
		{"answer[72]", "calc[72]"},
		// Rejected actions stay themselves.
		{"calc[2+]", "calc[2 +]"},
		{"calc[1/0]", "calc[2/0]"},
		{"answer[many]", "answer[lots]"},
		{"72", "seventy-two"},
		{"####", "#### x"},
	}
	envtest.CheckCanonical(t, e, same, differ)
	envtest.CheckCanonicalRejected(t, e, "calc[2+]", "calc[1/0]", "calc[1 000]", "answer[]", "72", "Thought: hmm\nAction:  solve[x] ", "Action: ' solve[x] '",
		"calc["+strings.Repeat("1+", 250)+"1]")
}

// TestCanonicalExpressionKeepsTheValue checks that an expression's canonical
// form evaluates, to the same value, for the generated solutions' steps and
// for hand-written ones.
func TestCanonicalExpressionKeepsTheValue(t *testing.T) {
	exprs := []string{"1,200 − 3.50 %", "(+48 + 24) × 3", "-.5 * -2", "$1,234.500 / 00.25", "((2))%", "7 ÷ 2 · 4", "1,234"}
	for seed := range int64(50) {
		p, err := generateProblem(envs.Train, seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.steps {
			exprs = append(exprs, s.expr)
		}
	}
	for _, expr := range exprs {
		want, err := evaluate(expr)
		if err != nil {
			t.Fatalf("evaluate(%q): %v", expr, err)
		}
		c := canonicalExpression(expr)
		got, err := evaluate(c)
		if err != nil || got.Cmp(want) != 0 || len(c) > len(expr) {
			t.Errorf("%q canonicalises to %q = %v, %v; want %v", expr, c, got, err, want)
		}
	}
}

// TestCanonicalCalcActsAlike steps equivalent math-calc actions in copies of
// an episode: the same value and grading, the expression shown aside.
func TestCanonicalCalcActsAlike(t *testing.T) {
	pairs := [][2]string{
		{"calc[48/2]", "Action: CALCULATE[ 48 ÷ 2.0 ]"},
		{"calc[(48+24)*3]", "calc[(48 + 24) x 3]"},
		{"answer[72]", "#### 72.00"},
		{"answer[72]", "finish[seventy-two: 72]"},
	}
	for _, p := range pairs {
		if !envs.Equivalent(newEnv(t, true), p[0], p[1]) {
			t.Fatalf("%q and %q are not equivalent", p[0], p[1])
		}
		var results [2]envs.StepResult
		for i, a := range p {
			e := newEnv(t, true)
			if _, err := e.Reset(envs.Train, 3); err != nil {
				t.Fatal(err)
			}
			res, err := e.Step(a)
			if err != nil {
				t.Fatal(err)
			}
			results[i] = res
		}
		x, y := results[0], results[1]
		// math-calc echoes the expression as written: compare the value.
		_, vx, _ := strings.Cut(x.Observation, "] = ")
		_, vy, _ := strings.Cut(y.Observation, "] = ")
		if vx != vy || x.Reward != y.Reward || x.Done != y.Done || x.Info.ValidAction != y.Info.ValidAction || !x.Info.ValidAction {
			t.Errorf("%q and %q act differently: %+v / %+v", p[0], p[1], x, y)
		}
	}
}

func FuzzCanonicalExpression(f *testing.F) {
	for _, s := range []string{"1,200 − 3.50 %", "(+48 + 24) × 3", "-.5 * -2", "$1,234.500 / 00.25", "2x3", "1,2345", "5.", "((2))%+-+3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		want, err := evaluate(expr)
		if err != nil {
			return
		}
		c := canonicalExpression(expr)
		got, err := evaluate(c)
		if err != nil || got.Cmp(want) != 0 || len(c) > len(expr) || canonicalExpression(c) != c {
			t.Fatalf("%q canonicalises to %q = %v, %v; want %v, no longer, and stable", expr, c, got, err, want)
		}
	})
}

// FuzzCanonicalActsAlike steps a text and its canonical form in copies of an
// episode of math and of math-calc: a valid action's canonical form is a
// valid action graded or evaluated alike (math-calc shows the expression as
// written, so only the value after it is compared).
func FuzzCanonicalActsAlike(f *testing.F) {
	for _, s := range []string{"#### 1,000", "Thought: 2+2\nAction: answer[4.0]", "calc[ 1,200 × 3 ]", "finish[$72]", "The answer is \\boxed{72}."} {
		f.Add(int64(0), s)
	}
	f.Fuzz(func(t *testing.T, seed int64, x string) {
		for _, withCalc := range []bool{false, true} {
			a, b := newEnv(t, withCalc), newEnv(t, withCalc)
			for _, e := range []*Env{a, b} {
				if _, err := e.Reset(envs.Train, seed&15); err != nil {
					t.Fatal(err)
				}
			}
			c := a.Canonical(x)
			ra, err := a.Step(x)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := b.Step(c)
			if err != nil {
				t.Fatal(err)
			}
			oa, ob := ra.Observation, rb.Observation
			if i, j := strings.LastIndex(oa, "] = "), strings.LastIndex(ob, "] = "); withCalc && i >= 0 && j >= 0 {
				oa, ob = oa[i:], ob[j:]
			}
			if ra.Info.ValidAction && (oa != ob || !rb.Info.ValidAction || ra.Reward != rb.Reward || ra.Done != rb.Done) {
				t.Fatalf("%q and its canonical form %q act differently (calc %v): %q / %q", x, c, withCalc, ra.Observation, rb.Observation)
			}
		}
	})
}
