package math

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
)

// TestTemplatesWriteConsistentSolutions checks every template at every
// difficulty: the requested number of steps, each annotated with its own
// calculation, a positive whole answer, and well-formed text.
func TestTemplatesWriteConsistentSolutions(t *testing.T) {
	for _, tmpl := range templates {
		for steps := minSteps; steps <= maxSteps; steps++ {
			rng := rand.New(rand.NewPCG(uint64(steps), 99))
			for range 300 {
				p, err := generateFrom(tmpl, rng, steps)
				if err != nil {
					t.Fatalf("%s, %d steps: %v", tmpl.name, steps, err)
				}
				checkProblem(t, p, steps)
			}
		}
	}
}

func checkProblem(t *testing.T, p problem, steps int) {
	t.Helper()
	if len(p.steps) != steps {
		t.Fatalf("%s: %d steps, want %d", p.template, len(p.steps), steps)
	}
	for _, s := range p.steps {
		v, err := evaluate(s.expr)
		if err != nil || !v.IsInt() || v.Num().Int64() != s.value {
			t.Fatalf("%s: step %q evaluates to %v (%v), recorded %d", p.template, s.expr, v, err, s.value)
		}
		result := strconv.FormatInt(s.value, 10)
		if !strings.Contains(s.text, "<<"+s.expr+"="+result+">>"+result) {
			t.Fatalf("%s: step text %q lacks its annotation", p.template, s.text)
		}
	}
	if p.answer <= 0 || p.answer != p.steps[len(p.steps)-1].value {
		t.Fatalf("%s: answer %d, last step %d", p.template, p.answer, p.steps[len(p.steps)-1].value)
	}
	if !strings.HasSuffix(p.solution(), "\n#### "+strconv.FormatInt(p.answer, 10)) {
		t.Fatalf("%s: solution does not end with the answer:\n%s", p.template, p.solution())
	}
	for _, bad := range []string{"%!", "{", "  ", " 1 hours"} {
		if strings.Contains(p.question+p.solution(), bad) {
			t.Fatalf("%s: malformed text (%q):\n%s\n%s", p.template, bad, p.question, p.solution())
		}
	}
	if !strings.HasSuffix(p.question, "?") {
		t.Fatalf("%s: question does not end with a question: %q", p.template, p.question)
	}
}

func TestSplitsShareNoProblem(t *testing.T) {
	const n = 3000
	questions := map[string]envs.Split{}
	templatesBySplit := map[envs.Split]map[string]bool{}
	stepsBySplit := map[envs.Split]map[int]bool{}
	for _, split := range envs.Splits {
		templatesBySplit[split] = map[string]bool{}
		stepsBySplit[split] = map[int]bool{}
		for seed := range int64(n) {
			p, err := generateProblem(split, seed)
			if err != nil {
				t.Fatal(err)
			}
			checkProblem(t, p, len(p.steps))
			if prev, dup := questions[p.question]; dup && prev != split {
				t.Fatalf("%q is in %s and %s", p.question, prev, split)
			}
			questions[p.question] = split
			templatesBySplit[split][p.template] = true
			stepsBySplit[split][len(p.steps)] = true
		}
	}
	for _, tmpl := range templates {
		inTrain, inTest, inUnseen := templatesBySplit[envs.Train][tmpl.name], templatesBySplit[envs.Test][tmpl.name], templatesBySplit[envs.Unseen][tmpl.name]
		if tmpl.unseen && (inTrain || inTest || !inUnseen) || !tmpl.unseen && (!inTrain || !inTest || inUnseen) {
			t.Errorf("template %s (held out %v): train %v test %v unseen %v", tmpl.name, tmpl.unseen, inTrain, inTest, inUnseen)
		}
	}
	for _, split := range envs.Splits {
		if len(stepsBySplit[split]) != maxSteps-minSteps+1 {
			t.Errorf("%s: difficulties %v, want every one from %d to %d", split, stepsBySplit[split], minSteps, maxSteps)
		}
	}
	if _, err := generateProblem("validation", 0); err == nil {
		t.Error("unknown split accepted")
	}
}

func TestSeedsGiveDifferentProblems(t *testing.T) {
	for _, split := range envs.Splits {
		seen := map[string]bool{}
		const n = 1000
		for seed := range int64(n) {
			p, err := generateProblem(split, seed)
			if err != nil {
				t.Fatal(err)
			}
			seen[p.question] = true
		}
		if len(seen) < n*99/100 {
			t.Errorf("%s: %d distinct problems in %d seeds", split, len(seen), n)
		}
	}
}
