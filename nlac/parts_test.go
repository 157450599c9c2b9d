package nlac

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/rollout"
)

// episode is a hand-made three-step WebShop-like episode that succeeds.
func episode(seed int64, success bool) rollout.Trajectory {
	score := 0.0
	if success {
		score = 1
	}
	return rollout.Trajectory{
		Env: "shop", Split: envs.Train, Seed: seed, Instruction: "Buy what you are asked for. Answer with Action: ...",
		Steps: []rollout.Step{
			{Observation: "Find red shoes under $40.", Action: "Thought: search.\nAction: search[red shoes]", ParsedAction: "search[red shoes]", PromptTokenIDs: []int32{1, 2}, Info: envs.Info{ValidAction: true}},
			{Observation: "Results: [B01] Red shoes $35 | [B02] Blue shoes $20", Action: "Action: click[B01]", ParsedAction: "click[B01]", PromptTokenIDs: []int32{1, 2, 3}, Info: envs.Info{ValidAction: true}},
			{Observation: "Red shoes, $35. [Buy Now]", Action: "Action: click[Buy Now]", ParsedAction: "click[Buy Now]", Reward: score, Done: true, PromptTokenIDs: []int32{1, 2, 3, 4}, Info: envs.Info{ValidAction: true, Success: success, Score: score}},
		},
		FinalObservation: "Thank you for shopping.", Return: score, Score: score, Success: success, NumSteps: 3,
	}
}

// TestBellmanTargets checks the backup's targets on hand-made
// transitions: at the last step the true outcome; before it, what
// happened next followed by a' and its predicted future, its outcome
// line kept; the merge prompt shows the merge role everything it needs.
// The outcome line comes first or last as nlac.outcome_first says.
func TestBellmanTargets(t *testing.T) {
	e := &Episode{Iteration: 1, Trajectory: episode(7, true)}
	last := Transition{Episode: e, Step: 2}
	if !last.Done() {
		t.Fatal("the last step is not terminal")
	}
	first := Transition{Episode: e, Step: 0}
	if first.Done() {
		t.Fatal("the first step is terminal")
	}
	for _, outcomeFirst := range []bool{false, true} {
		f := futureForm{outcomeFirst: outcomeFirst}
		// placed checks that d's outcome line is the one wanted, first or
		// last as the form puts it.
		placed := func(what, d, want string) {
			t.Helper()
			lines := strings.Split(d, "\n")
			at := lines[len(lines)-1]
			if outcomeFirst {
				at = lines[0]
			}
			if at != want {
				t.Errorf("outcome first %v: %s has %q where its outcome line %q belongs:\n%s", outcomeFirst, what, at, want, d)
			}
		}
		got := f.terminalTarget(last)
		for _, want := range []string{`Next: "Thank you for shopping."`, "reward 1.00", "the episode ends"} {
			if !strings.Contains(got, want) {
				t.Errorf("terminal target lacks %q:\n%s", want, got)
			}
		}
		placed("the terminal target", got, "Outcome: success (score 1.00).")
		failed := &Episode{Trajectory: episode(8, false)}
		failed.Trajectory.Truncated = true
		got = f.terminalTarget(Transition{Episode: failed, Step: 2})
		placed("a truncated failure's target", got, "Outcome: failure (score 0.00).")
		if !strings.Contains(got, "step limit") {
			t.Errorf("truncated failure's target: %s", got)
		}
		failed.Trajectory.ContextFull = "the conversation needs 600 tokens, the context holds 512"
		if got = f.terminalTarget(Transition{Episode: failed, Step: 2}); !strings.Contains(got, "outgrew the context") {
			t.Errorf("a failure cut by a full context: %s", got)
		}

		// The prediction d' comes in either form: its outcome line is
		// found and placed as this run writes futures.
		for _, prediction := range []string{
			"Next: the page shows the shoes.\nThen: the agent buys them.\nOutcome: success (score 1.00).",
			"Outcome: success (score 1.00).\nNext: the page shows the shoes.\nThen: the agent buys them.",
		} {
			got = f.templateMerge(first, "Action: click[B01]", prediction)
			// d' ended at a'; from (s, a) that is one step later.
			placed("the merged target", got, "Outcome: success (score 1.00, 1 step later).")
			wantOrder := []string{`Next: "Results: [B01] Red shoes $35 | [B02] Blue shoes $20" (reward 0.00).`, "Then: Action: click[B01].", "Next: the page shows the shoes."}
			at := 0
			for _, w := range wantOrder {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("merged target lacks %q after position %d:\n%s", w, at, got)
				}
				at += i + len(w)
			}
		}
		// A long prediction is cut, but its outcome line survives.
		long := strings.Repeat("the agent browses on; ", 60) + "\nOutcome: failure (score 0.00, 4 steps later)."
		got = f.templateMerge(first, "Action: x", long)
		placed("a long prediction's merge", got, "Outcome: failure (score 0.00, 5 steps later).")
		// A prediction whose outcome line is not in the written form is
		// kept as the model wrote it.
		got = f.templateMerge(first, "Action: x", "Next: more.\nOutcome: probably fine")
		placed("a free-form outcome's merge", got, "Outcome: probably fine")
		if len(got) > 1000 {
			t.Errorf("long prediction merged into %d characters", len(got))
		}

		// The real future, the self-distillation ablation's and the
		// warm-up's: detail in order, the outcome where the form puts it.
		got = f.trueFuture(first)
		at := 0
		for _, w := range []string{"Next: \"Results:", "Then: Action: click[B01] -> \"Red shoes", "Then: Action: click[Buy Now] -> \"Thank you"} {
			i := strings.Index(got[at:], w)
			if i < 0 {
				t.Fatalf("true future lacks %q after position %d:\n%s", w, at, got)
			}
			at += i + len(w)
		}
		placed("the true future", got, "Outcome: success (score 1.00, 2 steps later).")
		if c := groundCritique(got, expertComment("Action: click[B01]", false), false); !strings.HasPrefix(c, "Outcome: success (score 1.00, 2 steps later). An expert would do") {
			t.Errorf("outcome first %v: the warm-up's critique does not start from the outcome: %q", outcomeFirst, c)
		}
	}

	p, err := LoadPrompts("")
	if err != nil {
		t.Fatal(err)
	}
	prediction := "Outcome: success (score 1.00).\nNext: the page shows the shoes."
	for _, outcomeFirst := range []bool{false, true} {
		d := promptData{Instruction: "Buy.", History: transcript(e, 0, views(4)[0]), Action: "Action: search[red shoes]", OutcomeFirst: outcomeFirst}
		mergeData(first, "Action: click[B01]", prediction)(&d)
		msgs, err := p.render(roleMerge, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Find red shoes under $40.", "Action: search[red shoes]", "Results: [B01] Red shoes $35", "reward 0.00", "The agent's next action: Action: click[B01]", prediction} {
			if !strings.Contains(msgs[1].Content, want) {
				t.Errorf("merge prompt lacks %q:\n%s", want, msgs[1].Content)
			}
		}
		// Both roles that write futures ask for the outcome where it goes.
		succ, err := p.render(roleSuccessor, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{msgs[1].Content, succ[1].Content} {
			if asked := strings.Contains(m, "first how it ends") || strings.Contains(m, "first the prediction's line"); asked != outcomeFirst {
				t.Errorf("outcome first %v, but the prompt asks otherwise:\n%s", outcomeFirst, m)
			}
		}
	}
}

// TestTranscript checks the state's text: the first observation always,
// the latest steps, and a note of what was left out.
func TestTranscript(t *testing.T) {
	e := &Episode{Trajectory: episode(1, true)}
	got := transcript(e, 2, view{steps: 1, instructionChars: 100, observationChars: 100})
	want := "Observation 1: Find red shoes under $40.\n(actions 1 to 1 and what followed them left out)\n" +
		"Observation 2: Results: [B01] Red shoes $35 | [B02] Blue shoes $20\nAction 2: Action: click[B01]\nObservation 3: Red shoes, $35. [Buy Now]\n"
	if got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if got := transcript(e, 0, views(4)[0]); got != "Observation 1: Find red shoes under $40.\n" {
		t.Errorf("first step's transcript: %q", got)
	}
}

// TestReadingJudgements: ParseJudgement reads the verdict a critique ends
// with; reasoning is the critique before it, which the verdicts' scores
// continue.
func TestReadingJudgements(t *testing.T) {
	for text, want := range map[string]Judgement{
		"The action is fine.\nJudgement: optimal":                      Optimal,
		"judgment: Suboptimal":                                         Suboptimal,
		"**Judgement:** sub-optimal":                                   Suboptimal,
		"Judgement - not optimal.":                                     Suboptimal,
		"Judgement: suboptimal at first... Revised judgement: optimal": Optimal,
		"The action looks optimal to me.":                              Unparsed,
		"":                                                             Unparsed,
		"Judgement: unclear":                                           Unparsed,
		"Outcome: Optimal":                                             Optimal,
		"Next: the cart.\nVerdict: suboptimal":                         Suboptimal,
		"Outcome: success (score 1.00).":                               Unparsed,
		"Outcome: suboptimal\nJudgement: optimal":                      Optimal,
		"**Judgement:** **optimal**":                                   Optimal,
		"Judgement:\n\n**Suboptimal**":                                 Suboptimal,
		"Judgement: __not optimal__":                                   Suboptimal,
		"Judgement: the order lookup is optimal":                       Unparsed,
	} {
		if got := ParseJudgement(text); got != want {
			t.Errorf("ParseJudgement(%q): %v, want %v", text, got, want)
		}
	}
	for text, want := range map[string]string{
		"The action is fine.\nJudgement: optimal": "The action is fine.",
		"Judgement: suboptimal":                   "",
		"It helps. Judgement: optimal. Done.":     "It helps.",
		"Outcome: suboptimal\nJudgement: optimal": "Outcome: suboptimal",
		"The action looks optimal to me.":         "The action looks optimal to me.",
		// Cut off in its verdict; emphasis around the label.
		"It helps.\nJudgement:":             "It helps.",
		"It helps.\nVerdict: sub":           "It helps.",
		"It helps. **Judgement:** optimal":  "It helps.",
		"**Judgement:** optimal":            "",
		"The future ends. Outcome: success": "The future ends. Outcome: success",
		"No verdict.":                       "No verdict.",
		"**Verdict:** sub-opt":              "",
	} {
		if got := reasoning(text); got != want {
			t.Errorf("reasoning(%q): %q, want %q", text, got, want)
		}
	}
}

// TestAreaUnderROC checks the AUC of the critic's probabilities on hand
// cases: perfect, reversed, ties counting half, and an empty side.
func TestAreaUnderROC(t *testing.T) {
	for _, c := range []struct {
		with, without []float64
		want          float64
	}{
		{[]float64{0.9, 0.8}, []float64{0.1, 0.2, 0.3}, 1},
		{[]float64{0.1}, []float64{0.9, 0.8}, 0},
		{[]float64{0.9, 0.5}, []float64{0.5, 0.1}, 3.5 / 4},
		{[]float64{0.4, 0.4}, []float64{0.4}, 0.5},
	} {
		if got, ok := areaUnderROC(c.with, c.without); !ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("areaUnderROC(%v, %v) = %v, %v; want %v", c.with, c.without, got, ok, c.want)
		}
	}
	if _, ok := areaUnderROC([]float64{0.5}, nil); ok {
		t.Error("an AUC with no actions on one side")
	}
	var f Foresight
	if _, ok := f.mean(); ok {
		t.Error("a mean probability of success with nothing scored")
	}
	f.add(0.9, true)
	f.add(0.2, false)
	f.add(0.4, true)
	if a, ok := f.auc(); !ok || a != 1 {
		t.Errorf("foresight AUC %v, %v; want 1", a, ok)
	}
	if mean, ok := f.mean(); !ok || math.Abs(mean-0.5) > 1e-12 {
		t.Errorf("mean probability of success %v, %v; want 0.5", mean, ok)
	}
}

// TestProbabilityDigits checks that probabilities near 0 or 1 keep the
// digits that tell them apart, as the log needs where the evaluator rates
// every action near 1 and the rank decides between them.
func TestProbabilityDigits(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want string
	}{
		{0.5, "0.50"},
		{0.99, "0.99"},
		{0.013, "0.01"},
		{0, "0.00"},
		{1, "1.00"},
		{0.0042, "0.0042"},
		{0.99987, "0.99987"},
		{0.999, "0.9990"},
		{1 - 3.14e-9, "1 - 3.1e-09"},
		{2.5e-8, "2.5e-08"},
	} {
		if got := probability(c.p); got != c.want {
			t.Errorf("probability(%v) = %q, want %q", c.p, got, c.want)
		}
	}
}

// TestVerdictScores scores the verdicts of two critiques with the made
// model: each probability of "optimal" is the two verdicts' softmax after
// the critique's reasoning (its own verdict left out), as the engine
// scores the whole continuations; the critique without a verdict gets
// the likelier one, marked asked; one whose verdict does not fit the
// context no longer fits.
func TestVerdictScores(t *testing.T) {
	path := byteModel(t)
	m, err := llm.Load(path, llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := m.NewEngine(llm.EngineOptions{Context: 256, Parallel: 4, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	roles := &roleModel{cfg: rl.DefaultConfig().NLAC, model: m, collector: &rl.LocalCollector{Engine: e}, critic: rl.Snapshot{Model: path}, context: 256}
	tokens := func(s string) []int32 {
		out, err := m.Tokenize(s, false, false)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	prompt, err := m.Tokenize("Judge the action: aei", true, true)
	if err != nil {
		t.Fatal(err)
	}
	critiques := []critique{{text: "It writes vowels.\nJudgement: suboptimal", fits: true}, {text: "No verdict.\nJudgement:", fits: true}, {text: "Not scored.", fits: false}}
	if err := roles.scoreVerdicts(ctx, [][]int32{prompt, prompt, prompt}, critiques); err != nil {
		t.Fatal(err)
	}
	for k, reasoning := range []string{"It writes vowels.", "No verdict."} {
		var sums [2]float64
		for v, w := range verdictWords {
			res, err := e.Score(ctx, []llm.ScoreRequest{{PromptTokens: prompt, ContinuationTokens: tokens(reasoning + verdictCue + w)}}, llm.CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sums[v] = res[0].Sum
		}
		want := math.Exp(sums[0]) / (math.Exp(sums[0]) + math.Exp(sums[1]))
		if got := critiques[k].pOptimal; math.Abs(got-want) > 1e-4 || got <= 0 || got >= 1 {
			t.Errorf("critique %d: p(optimal) %v, want %v", k, got, want)
		}
	}
	if c := critiques[0]; c.asked || c.text != "It writes vowels.\nJudgement: suboptimal" {
		t.Errorf("a critique with a verdict was changed: %q (asked %v)", c.text, c.asked)
	}
	likelier := Suboptimal
	if critiques[1].pOptimal > 0.5 {
		likelier = Optimal
	}
	if c := critiques[1]; !c.asked || c.text != "No verdict.\nJudgement: "+likelier.String() {
		t.Errorf("the critique cut off before its verdict: %q (asked %v), want the likelier verdict %s after its reasoning", c.text, c.asked, likelier)
	}
	if critiques[2].pOptimal != 0 {
		t.Error("a critique that does not fit was scored")
	}

	// Room for the longer verdict exactly: scored; a token less: the
	// critique no longer fits.
	exact := len(prompt) + len(tokens("No verdict.\nJudgement: suboptimal"))
	for _, room := range []int{exact, exact - 1} {
		roles.context = room
		short := []critique{{text: "No verdict.", fits: true}}
		if err := roles.scoreVerdicts(ctx, [][]int32{prompt}, short); err != nil {
			t.Fatal(err)
		}
		if fits := room == exact; short[0].fits != fits || short[0].asked != fits {
			t.Errorf("context %d for %d tokens: fits %v, asked %v; want %v", room, exact, short[0].fits, short[0].asked, fits)
		}
	}
}

// TestBufferPersistsAndSamples fills a buffer past its capacity, saves
// and reloads it, and checks the draws: distinct, the oldest episodes
// gone, uniform or favouring recent iterations as asked.
func TestBufferPersistsAndSamples(t *testing.T) {
	b := &Buffer{Capacity: 12}
	for it := 1; it <= 5; it++ {
		b.Add(it, []rollout.Trajectory{episode(int64(it*10), true), episode(int64(it*10+1), false)})
	}
	// 10 episodes of 3 steps; 12 transitions fit: iterations 4 and 5.
	if b.Len() != 12 {
		t.Fatalf("buffer holds %d transitions, want 12", b.Len())
	}
	path := filepath.Join(t.TempDir(), "replay.jsonl.gz")
	if err := b.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadBuffer(path, 12)
	if err != nil {
		t.Fatal(err)
	}
	if back.Len() != 12 || len(back.episodes) != 4 || back.episodes[0].Iteration != 4 || back.episodes[0].Trajectory.Seed != 40 {
		t.Fatalf("reloaded %d transitions in %d episodes, first %+v", back.Len(), len(back.episodes), back.episodes[0].Iteration)
	}
	a := b.Sample(5, 1, rand.New(rand.NewPCG(3, 0)))
	c := back.Sample(5, 1, rand.New(rand.NewPCG(3, 0)))
	if len(a) != 5 {
		t.Fatalf("%d transitions drawn, want 5", len(a))
	}
	seen := map[[2]int64]bool{}
	for i := range a {
		key := [2]int64{a[i].Episode.Trajectory.Seed, int64(a[i].Step)}
		if seen[key] {
			t.Fatalf("transition %v drawn twice", key)
		}
		seen[key] = true
		if a[i].Episode.Trajectory.Seed != c[i].Episode.Trajectory.Seed || a[i].Step != c[i].Step {
			t.Fatal("the reloaded buffer draws other transitions with the same seed")
		}
	}
	if got := b.Sample(100, 1, rand.New(rand.NewPCG(1, 0))); len(got) != 12 {
		t.Fatalf("asked for more than the buffer holds: %d drawn, want 12", len(got))
	}

	// Draw often: uniform gives iteration 5 half the draws; decay 0.2
	// gives it 1/(1+0.2) of the weight, so clearly more.
	count := func(decay float64) float64 {
		rng := rand.New(rand.NewPCG(9, 0))
		n5, n := 0, 0
		for range 2000 {
			for _, tr := range b.Sample(1, decay, rng) {
				n++
				if tr.Episode.Iteration == 5 {
					n5++
				}
			}
		}
		return float64(n5) / float64(n)
	}
	if u := count(1); math.Abs(u-0.5) > 0.05 {
		t.Errorf("uniform sampling drew iteration 5 in %.3f of draws, want 0.5", u)
	}
	if r := count(0.2); math.Abs(r-1/1.2) > 0.05 {
		t.Errorf("recency sampling (decay 0.2) drew iteration 5 in %.3f of draws, want %.3f", r, 1/1.2)
	}

	// Old episodes' weights are tiny (0.5^39 for the oldest of 40
	// iterations) but the draw must still rank them below the recent
	// ones, not tie them at 0 and take them in buffer order, oldest
	// first, as u^(1/w) did once it underflowed.
	long := &Buffer{Capacity: 120}
	for it := 1; it <= 40; it++ {
		long.Add(it, []rollout.Trajectory{episode(int64(it), true)})
	}
	oldest := 40
	for _, tr := range long.Sample(45, 0.5, rand.New(rand.NewPCG(5, 0))) {
		oldest = min(oldest, tr.Episode.Iteration)
	}
	if oldest <= 10 {
		t.Errorf("recency sampling (decay 0.5) of 45 of 120 transitions drew iteration %d, of weight 0.5^%d", oldest, 40-oldest)
	}

	// A corrupt file is an error naming it, not a crash.
	bad := filepath.Join(t.TempDir(), "bad.jsonl.gz")
	if err := os.WriteFile(bad, []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBuffer(bad, 10); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("corrupt buffer: %v", err)
	}
}

// TestUserPrompts: a directory's template replaces the built-in one of
// its role; a misspelt file name or a template without its sections is
// an error.
func TestUserPrompts(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "evaluator.tmpl"), []byte(`{{define "system"}}Judge.{{end}}{{define "user"}}{{.Action}} {{range .Futures}}[{{.}}]{{end}}{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPrompts(dir)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := p.render(roleEvaluator, promptData{Action: "Action: go", Futures: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].Content != "Judge." || msgs[1].Content != "Action: go [a][b]" {
		t.Errorf("user template rendered %q / %q", msgs[0].Content, msgs[1].Content)
	}
	if msgs, err := p.render(roleSuccessor, promptData{Action: "Action: go"}); err != nil || !strings.Contains(msgs[1].Content, "Outcome: success") {
		t.Errorf("built-in successor template: %v %v", msgs, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "critic.tmpl"), []byte(`{{define "system"}}{{end}}{{define "user"}}{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrompts(dir); err == nil || !strings.Contains(err.Error(), "critic.tmpl names no role") {
		t.Errorf("misspelt template: %v", err)
	}
	os.Remove(filepath.Join(dir, "critic.tmpl"))
	if err := os.WriteFile(filepath.Join(dir, "refine.tmpl"), []byte(`{{define "user"}}x{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrompts(dir); err == nil || !strings.Contains(err.Error(), `no {{define "system"}}`) {
		t.Errorf("template without a system section: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "refine.tmpl"), []byte(`{{define "system"}}R{{end}}{{define "user"}}{{.Futurs}}{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrompts(dir); err == nil || !strings.Contains(err.Error(), "refine.tmpl") || !strings.Contains(err.Error(), "Futurs") {
		t.Errorf("template with a misspelt field: %v, want an error naming the file and the field when loaded", err)
	}
}

// TestBuiltinRolesShareTheirHead: the built-in prompts of every role
// begin with the same system message, task, history and action, and ask
// for their role's text only after them, so that the engine's prefix
// cache evaluates a transition's head once for its future, critique,
// verdict and refinement.
func TestBuiltinRolesShareTheirHead(t *testing.T) {
	p, err := LoadPrompts("")
	if err != nil {
		t.Fatal(err)
	}
	d := promptData{Instruction: "Buy a red scarf.", History: "Observation: [Search]", Action: "search[red scarf]",
		NextObservation: "Results", NextAction: "click[b01]", NextFuture: "It buys it.", Futures: []string{"It buys it."}, Critique: "Good."}
	head := "Task instructions:\nBuy a red scarf.\n\nObservation: [Search]\nThe agent's action: search[red scarf]\n"
	var system string
	for _, role := range roles {
		msgs, err := p.render(role, d)
		if err != nil {
			t.Fatal(err)
		}
		if system == "" {
			system = msgs[0].Content
		}
		if msgs[0].Content != system {
			t.Errorf("%s's system message %q differs from %q", role, msgs[0].Content, system)
		}
		if !strings.HasPrefix(msgs[1].Content, head) || len(msgs[1].Content) < len(head)+20 {
			t.Errorf("%s's user message does not begin with the shared head and go on with its request:\n%s", role, msgs[1].Content)
		}
	}
}

// scripted is a collector whose generations are given texts, one per
// prompt in call order: the rules that follow the model's answers
// (judgements, refinement checks, fallbacks) tested exactly.
type scripted struct {
	// calls are the texts of each Generate call, in turn: one per prompt
	// (each of its n samples that text), or n per prompt, in order.
	calls   [][]string
	prompts [][][]int32 // the prompts of each call made
	// pOptimal are the probabilities of "optimal" the scored verdicts get,
	// in turn (0.5 once none are left); scored the cues scored.
	pOptimal []float64
	scored   [][]int32
}

func (s *scripted) Load(context.Context, rl.Snapshot) error { return nil }

func (s *scripted) Collect(context.Context, rl.Snapshot, rl.Episodes) ([]rollout.Trajectory, rl.CollectStats, error) {
	return nil, rl.CollectStats{}, errors.New("scripted collector plays no episodes")
}

func (s *scripted) Generate(_ context.Context, _ rl.Snapshot, prompts [][]int32, n int) ([][]llm.Completion, error) {
	if len(s.calls) == 0 {
		return nil, errors.New("no scripted answers left")
	}
	texts := s.calls[0]
	s.calls = s.calls[1:]
	s.prompts = append(s.prompts, prompts)
	out := make([][]llm.Completion, len(prompts))
	for i := range prompts {
		for k := range n {
			switch len(texts) {
			case len(prompts):
				out[i] = append(out[i], llm.Completion{Text: texts[i]})
			case len(prompts) * n:
				out[i] = append(out[i], llm.Completion{Text: texts[i*n+k]})
			default:
				return nil, fmt.Errorf("%d prompts x %d samples, %d scripted answers", len(prompts), n, len(texts))
			}
		}
	}
	return out, nil
}

// Score gives each pair of verdicts (optimal, suboptimal) after one cue
// the log-probabilities of the next scripted probability of "optimal".
func (s *scripted) Score(_ context.Context, _ rl.Snapshot, prompts, continuations [][]int32) ([]float64, error) {
	if len(prompts)%2 != 0 || len(prompts) != len(continuations) {
		return nil, fmt.Errorf("%d prompts, %d continuations: want pairs", len(prompts), len(continuations))
	}
	out := make([]float64, 0, len(prompts))
	for k := 0; k < len(prompts); k += 2 {
		p := 0.5
		if len(s.pOptimal) > 0 {
			p, s.pOptimal = s.pOptimal[0], s.pOptimal[1:]
		}
		s.scored = append(s.scored, prompts[k])
		out = append(out, math.Log(p), math.Log(1-p))
	}
	return out, nil
}

// scriptedSetting is what the tests with scripted answers critique: the
// byte model (for its tokenizer, closed with the test), short role
// prompts, and a failed two-step episode of the vowel task that writes
// xyz, then aei.
func scriptedSetting(t *testing.T) (*llm.Model, *Prompts, *Episode) {
	t.Helper()
	m, err := llm.Load(byteModel(t), llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	prompts, err := LoadPrompts(shortPrompts(t))
	if err != nil {
		t.Fatal(err)
	}
	ep := &Episode{Trajectory: rollout.Trajectory{Env: "vowels", Split: envs.Train, Seed: 1, Steps: []rollout.Step{
		{Observation: "Write vowels.", Action: "Action: xyz", ParsedAction: "xyz", PromptTokenIDs: []int32{1, 2}, Info: envs.Info{ValidAction: true}},
		{Observation: "More vowels.", Action: "Action: aei", ParsedAction: "aei", PromptTokenIDs: []int32{1, 2, 3}, Done: true, Info: envs.Info{ValidAction: true}},
	}, NumSteps: 2}}
	return m, prompts, ep
}

// failedFuture is the successor model's scripted future of every action.
const failedFuture = "Next: \"More vowels.\"\nOutcome: failure."

// improveScripted runs the policy improvement of cfg (method nlac) on n
// transitions, the steps of ep in turn, the model's answers scripted by
// c, in environments newEnv makes; every scripted answer must be asked
// for.
func improveScripted(t *testing.T, m *llm.Model, prompts *Prompts, ep *Episode, newEnv func() envs.Env, cfg rl.NLACConfig, c *scripted, n int) ([]Record, Counts) {
	t.Helper()
	recs := make([]Record, n)
	for i := range recs {
		tr := Transition{Episode: ep, Step: i % len(ep.Trajectory.Steps)}
		recs[i] = Record{T: tr, Action: tr.action()}
	}
	roles := &roleModel{cfg: cfg, prompts: prompts, model: m, collector: c, newEnv: newEnv,
		instruction: "Write vowels.", context: 512, actionTokens: 8}
	var counts Counts
	if err := roles.improve(context.Background(), recs, "nlac", func(p uint64) uint64 { return p }, &counts); err != nil {
		t.Fatal(err)
	}
	if len(c.calls) != 0 {
		t.Errorf("%d scripted calls left: the rules asked the model less than expected", len(c.calls))
	}
	return recs, counts
}

// oneRound is improveScripted of one round, no verdict asked for, on as
// many transitions as critiques, with their futures, critiques and
// refinements scripted.
func oneRound(t *testing.T, m *llm.Model, prompts *Prompts, ep *Episode, newEnv func() envs.Env, critiques, refinements []string) ([]Record, Counts) {
	t.Helper()
	cfg := rl.DefaultConfig().NLAC
	cfg.AskJudgement = false
	c := &scripted{calls: [][]string{constantTexts(failedFuture, len(critiques)), critiques, refinements}}
	return improveScripted(t, m, prompts, ep, newEnv, cfg, c, len(critiques))
}

// TestRejectedActionsAreNotDistilled: an action the environment rejected
// is never distilled, neither when the critic approves it nor as what a
// failed refinement falls back to, while a valid refinement of it is; a
// refinement that repeats the action it refines is ruled invalid and
// counted apart.
func TestRejectedActionsAreNotDistilled(t *testing.T) {
	m, prompts, ep := scriptedSetting(t)
	ep.Trajectory.Steps[0] = rollout.Step{Observation: "Write vowels.", Action: "Action: 123", ParsedAction: "123", PromptTokenIDs: []int32{1, 2}}
	// Records 0, 2 and 4 are of the rejected 123, 1 and 3 of aei.
	critiques := []string{"Judgement: optimal", "Judgement: optimal", "Judgement: suboptimal", "Judgement: suboptimal", "Judgement: suboptimal"}
	// The refinements of records 2, 3 and 4: no action, aei again, aeiou.
	recs, counts := oneRound(t, m, prompts, ep, func() envs.Env { return &vowels{} }, critiques, []string{"", "Action: aei", "Action: aeiou"})
	for i, want := range []string{"", "Action: aei", "", "Action: aei", "Action: aeiou"} {
		if recs[i].Distill != want {
			t.Errorf("record %d: distilled %q (%s), want %q", i, recs[i].Distill, recs[i].Why, want)
		}
	}
	if !strings.Contains(recs[3].Why, "repeats the action") || recs[3].Rounds[0].Valid {
		t.Errorf("record 3, refined into itself: %q, valid %v", recs[3].Why, recs[3].Rounds[0].Valid)
	}
	if counts.RejectedKept != 2 || counts.InvalidRefinements != 1 || counts.UnchangedRefinements != 1 || counts.Refinements != 3 || counts.Changed != 1 {
		t.Errorf("counts %+v: want 2 rejected actions kept back, 1 invalid and 1 repeating refinement of 3, 1 action changed", counts)
	}
}

// TestRefinementsTheEnvironmentFailsToCheck: an environment that fails to
// replay the state a refinement is checked in leaves that refinement
// unchecked, counted and ruled invalid; the improvement goes on.
func TestRefinementsTheEnvironmentFailsToCheck(t *testing.T) {
	m, prompts, ep := scriptedSetting(t)
	down := func() envs.Env { return &unresettable{seed: ep.Trajectory.Seed} }
	recs, counts := oneRound(t, m, prompts, ep, down, []string{"Judgement: suboptimal", "Judgement: suboptimal"}, []string{"Action: aeiou", "Action: aeiou"})
	for i, want := range []string{"Action: xyz", "Action: aei"} {
		if recs[i].Distill != want || !strings.Contains(recs[i].Why, "the task server is down") {
			t.Errorf("record %d: distilled %q (%s), want the action it refined, %q, and the environment's error", i, recs[i].Distill, recs[i].Why, want)
		}
	}
	if counts.CheckErrors != 2 || counts.InvalidRefinements != 0 || counts.Refinements != 2 {
		t.Errorf("counts %+v: want 2 refinements, both unchecked", counts)
	}
}

// TestBackupWithoutRoomKeepsTheTransition: a transition whose s' prompt
// outgrows the context (here a' is too long) gets no backed-up target,
// is counted, and stays open for critique and distillation; the others
// get theirs.
func TestBackupWithoutRoomKeepsTheTransition(t *testing.T) {
	m, prompts, ep := scriptedSetting(t)
	recs := []Record{{T: Transition{Episode: ep, Step: 0}}, {T: Transition{Episode: ep, Step: 0}}, {T: Transition{Episode: ep, Step: 1}}}
	for i := range recs {
		recs[i].Action = recs[i].T.action()
	}
	c := &scripted{calls: [][]string{{"Action: " + strings.Repeat("x", 600), "Action: aeiou"}, {"Next: \"Over.\""}, {"Next: merged."}}}
	roles := &roleModel{cfg: rl.DefaultConfig().NLAC, prompts: prompts, model: m, collector: c, newEnv: func() envs.Env { return &vowels{} },
		instruction: "Write vowels.", context: 512, actionTokens: 8}
	var counts Counts
	if err := roles.backup(context.Background(), recs, func(p uint64) uint64 { return p }, &counts); err != nil {
		t.Fatal(err)
	}
	if recs[0].Target != "" || recs[0].TooLong || recs[1].Target != "Next: merged." || !strings.Contains(recs[2].Target, "Outcome:") {
		t.Errorf("targets %q (too long %v), %q, %q", recs[0].Target, recs[0].TooLong, recs[1].Target, recs[2].Target)
	}
	if counts.NoTarget != 1 || counts.TooLong != 0 {
		t.Errorf("counts %+v: want one transition without a target, none too long", counts)
	}
}

// TestCriticSequenceMakesRoomForLongTargets: a backed-up target longer
// than the futures the successor model samples (a terminal one holds the
// final observation) is trained on after a shorter view of the state,
// rather than left out.
func TestCriticSequenceMakesRoomForLongTargets(t *testing.T) {
	m, prompts, ep := scriptedSetting(t)
	ep.Trajectory.Steps[0].Observation = strings.Repeat("Write vowels. ", 45) // 630 characters, cut shorter in shorter views
	roles := &roleModel{cfg: rl.DefaultConfig().NLAC, prompts: prompts, model: m, newEnv: func() envs.Env { return &vowels{} },
		instruction: "Write vowels.", context: 512, actionTokens: 8}
	first := Transition{Episode: ep, Step: 0}
	rec := Record{T: first, Action: first.action()}
	// The view that leaves room for a sampled future; the target, 20
	// tokens (the byte model's characters) too long for it.
	_, full, err := roles.prompt(roleSuccessor, first, rec.Action, nil, roles.cfg.FutureTokens)
	if err != nil {
		t.Fatal(err)
	}
	rec.Target = "Next: " + strings.Repeat("a", roles.context-len(full)+20)
	target, err := m.Tokenize(rec.Target, false, false)
	if err != nil || len(full)+len(target) <= roles.context {
		t.Fatalf("the setting does not test it: prompt of %d tokens and a target of %d fit %d (%v)", len(full), len(target), roles.context, err)
	}
	s, ok, err := roles.criticSequence(rec)
	if err != nil || !ok || len(s.Tokens) > roles.context {
		t.Fatalf("critic sequence: ok %v, %d tokens, %v; want it to fit %d", ok, len(s.Tokens), err, roles.context)
	}
	if got, err := m.Detokenize(s.Tokens[len(s.Tokens)-len(target)-4:], false); err != nil || !strings.Contains(got, rec.Target[len(rec.Target)-50:]) {
		t.Errorf("the sequence does not end in the target: %q (%v)", got, err)
	}
}

// TestRefinementRules runs one round of critique and refinement on four
// transitions of the vowel task with scripted answers: an action judged
// optimal is kept; a refinement the environment accepts is distilled; one
// without an action, or one the environment rejects, falls back to the
// original action or is dropped, as configured; a critique without a
// judgement follows its rule.
func TestRefinementRules(t *testing.T) {
	m, prompts, ep := scriptedSetting(t)
	var c *scripted
	// The successor model's probabilities of success of the four
	// actions, scored before their futures, and then the scored
	// verdicts' probabilities of "optimal".
	foresight := []float64{0.9, 0.2, 0.7, 0.1}
	var verdicts []float64
	run := func(cfg rl.NLACConfig, critiques, refinements []string, later ...[]string) ([]Record, Counts) {
		t.Helper()
		c = &scripted{calls: append([][]string{constantTexts(failedFuture, len(critiques)), critiques, refinements}, later...),
			pOptimal: append(slices.Clone(foresight), verdicts...)}
		return improveScripted(t, m, prompts, ep, func() envs.Env { return &vowels{} }, cfg, c, len(critiques))
	}
	cfg := rl.DefaultConfig().NLAC
	cfg.AskJudgement = false // the rules for what stays unparsed first; asking below
	critiques := []string{"Fine.\nJudgement: optimal", "Judgement: suboptimal", "Judgement: suboptimal", "No verdict here."}
	// Refinements of records 1, 2, 3: valid, empty (no action at all),
	// rejected by the environment (no letters).
	refinements := []string{"Action: aeiou", "", "Action: 123"}
	recs, counts := run(cfg, critiques, refinements)
	want := []string{"Action: xyz", "Action: aeiou", "Action: xyz", "Action: aei"}
	for i, r := range recs {
		if r.Distill != want[i] {
			t.Errorf("record %d: distilled %q (%s), want %q", i, r.Distill, r.Why, want[i])
		}
	}
	if counts.Judgements != 4 || counts.Optimal != 1 || counts.Unparsed != 1 || counts.Refinements != 3 || counts.InvalidRefinements != 2 || counts.Changed != 1 {
		t.Errorf("counts %+v", counts)
	}
	// The episode failed: its three parsed judgements, one optimal.
	if tally(counts.ByOutcome) != [4]int{0, 0, 3, 1} {
		t.Errorf("judgements by outcome %+v", counts.ByOutcome)
	}
	// The expert writes aeiou: neither xyz (record 0, optimal; record 2,
	// suboptimal) nor aei (record 1, suboptimal) is its action.
	if tally(counts.ByExpert) != [4]int{0, 0, 3, 1} {
		t.Errorf("judgements by the expert's actions %+v", counts.ByExpert)
	}
	if !recs[1].Rounds[0].Valid || recs[2].Rounds[0].Valid || recs[3].Rounds[0].Valid {
		t.Errorf("validity of the refinements: %v %v %v", recs[1].Rounds[0].Valid, recs[2].Rounds[0].Valid, recs[3].Rounds[0].Valid)
	}

	// Dropping invalid refinements and skipping unparsed judgements.
	cfg.InvalidRefinement, cfg.UnparsedJudgement = "drop", "skip"
	recs, _ = run(cfg, critiques, refinements[:2])
	want = []string{"Action: xyz", "Action: aeiou", "", ""}
	for i, r := range recs {
		if r.Distill != want[i] {
			t.Errorf("drop/skip record %d: distilled %q (%s), want %q", i, r.Distill, r.Why, want[i])
		}
	}
	// A second round: the valid refinement of record 1 is critiqued again,
	// judged suboptimal, and its own refinement is empty: it falls back to
	// the action it refined, not to the action taken.
	cfg.InvalidRefinement, cfg.UnparsedJudgement, cfg.Refinements = "original", "suboptimal", 2
	recs, counts = run(cfg, critiques, refinements, []string{"Next: \"Over.\""}, []string{"Judgement: suboptimal"}, []string{""})
	if recs[1].Distill != "Action: aeiou" || len(recs[1].Rounds) != 2 || counts.Refinements != 4 {
		t.Errorf("second round: distilled %q (%s) after %d rounds, %d refinements", recs[1].Distill, recs[1].Why, len(recs[1].Rounds), counts.Refinements)
	}
	// A refinement's judgement is not the taken action's: not by outcome.
	if counts.Judgements != 5 || counts.ByOutcome.Without != 3 || counts.ByExpert.Without != 3 {
		t.Errorf("second round: %d judgements, %+v by outcome, %+v by the expert; want 5 and 3 of each", counts.Judgements, counts.ByOutcome, counts.ByExpert)
	}
	// Dropped in the second round: nothing is distilled, not the first
	// round's refinement; and the same for a second critique without a
	// judgement, skipped.
	cfg.InvalidRefinement = "drop"
	recs, _ = run(cfg, critiques, refinements, []string{"Next: \"Over.\""}, []string{"Judgement: suboptimal"}, []string{""})
	if recs[1].Distill != "" || len(recs[1].Rounds) != 2 {
		t.Errorf("dropped in the second round: distilled %q (%s) after %d rounds, want nothing", recs[1].Distill, recs[1].Why, len(recs[1].Rounds))
	}
	cfg.InvalidRefinement, cfg.UnparsedJudgement = "original", "skip"
	recs, _ = run(cfg, critiques, refinements[:2], []string{"Next: \"Over.\""}, []string{"No verdict."})
	if recs[1].Distill != "" || len(recs[1].Rounds) != 2 {
		t.Errorf("skipped in the second round: distilled %q (%s) after %d rounds, want nothing", recs[1].Distill, recs[1].Why, len(recs[1].Rounds))
	}
	cfg.Refinements, cfg.UnparsedJudgement = 1, "suboptimal"

	// Unparsed judgements kept as optimal.
	cfg.UnparsedJudgement = "optimal"
	recs, _ = run(cfg, critiques, refinements[:2])
	if recs[3].Distill != "Action: aei" || recs[3].Rounds[0].RefinedText != "" {
		t.Errorf("unparsed kept as optimal: distilled %q, refined %q", recs[3].Distill, recs[3].Rounds[0].RefinedText)
	}

	// Asked for a judgement: the two critiques without one get the
	// verdict the evaluator finds likelier after them (scripted: optimal
	// 0.8, then a tie: suboptimal, refined); the ones with a verdict keep
	// it whatever its probability.
	cfg.UnparsedJudgement, cfg.AskJudgement = "suboptimal", true
	critiques = []string{"Fine.\nJudgement: optimal", "No verdict here.", "Nothing to say.", "Judgement: suboptimal"}
	ep.Trajectory.Success = true
	verdicts = []float64{0.4, 0.8, 0.5, 0.6}
	recs, counts = run(cfg, critiques, []string{"Action: aeiou", "Action: 123"})
	ep.Trajectory.Success = false
	if o := counts.ByOutcome; o.With != 4 || o.OptimalWith != 2 || !slices.Equal(o.POptimalWith, verdicts) || o.Without != 0 {
		t.Errorf("asked, judgements by outcome of a successful episode %+v", counts.ByOutcome)
	}
	want = []string{"Action: xyz", "Action: aei", "Action: aeiou", "Action: aei"}
	for i, r := range recs {
		if r.Distill != want[i] {
			t.Errorf("asked, record %d: distilled %q (%s), want %q", i, r.Distill, r.Why, want[i])
		}
		if r.Rounds[0].POptimal != verdicts[i] {
			t.Errorf("asked, record %d: p(optimal) %v, want %v", i, r.Rounds[0].POptimal, verdicts[i])
		}
	}
	if counts.Judgements != 4 || counts.Optimal != 2 || counts.Asked != 2 || counts.AskedOptimal != 1 || counts.Unparsed != 0 || counts.Refinements != 2 {
		t.Errorf("asked: counts %+v", counts)
	}
	if r := recs[1].Rounds[0]; r.Critique != "No verdict here.\nJudgement: optimal" || !r.Asked {
		t.Errorf("asked critique %q (asked %v): want the verdict appended, marked asked", r.Critique, r.Asked)
	}
	if r := recs[2].Rounds[0]; r.Critique != "Nothing to say.\nJudgement: suboptimal" || !r.Asked || r.Judgement != Suboptimal {
		t.Errorf("asked critique %q (asked %v, %s): want suboptimal appended", r.Critique, r.Asked, r.Judgement)
	}
	// Each action's outcome is scored after the successor model's
	// prompt, the one its future is sampled from, and kept with the
	// first round; the episode succeeded, so all four are of a success.
	for k, r := range recs {
		cue, successor := c.scored[k], c.prompts[0][k]
		if got, err := m.Detokenize(cue[min(len(successor), len(cue)):], false); len(cue) <= len(successor) || !slices.Equal(cue[:len(successor)], successor) || err != nil || got != "Outcome:" {
			t.Errorf("outcome %d scored after %q (%v), want the successor model's prompt and \"Outcome:\"", k, got, err)
		}
		if rd := r.Rounds[0]; !rd.Foreseen || math.Abs(rd.PSuccess-foresight[k]) > 1e-12 {
			t.Errorf("record %d: p(success) %v (foreseen %v), want %v", k, rd.PSuccess, rd.Foreseen, foresight[k])
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
	if f := counts.Foresight; !slices.EqualFunc(f.PSuccessWith, foresight, near) || len(f.PSuccessWithout) != 0 {
		t.Errorf("foresight %+v: want %v, all of a successful episode", f, foresight)
	}
	// The verdicts are scored after the evaluator's prompt and the
	// critique's reasoning, its own verdict left out.
	for k, reasoning := range []string{"Fine.\nJudgement:", "No verdict here.\nJudgement:", "Nothing to say.\nJudgement:", "Judgement:"} {
		cue, critique := c.scored[len(foresight)+k], c.prompts[1][k]
		if len(cue) <= len(critique) || !slices.Equal(cue[:len(critique)], critique) {
			t.Fatalf("verdict %d: scored after %d tokens that do not begin with the evaluator's prompt", k, len(cue))
		}
		if got, err := m.Detokenize(cue[len(critique):], false); err != nil || got != reasoning {
			t.Errorf("verdict %d scored after %q (%v), want %q", k, got, err, reasoning)
		}
	}
}

// TestWholeReplyActionsStayWhole: where the environment reads the whole
// reply (math's worked solutions), an action judged optimal and a valid
// refinement are distilled whole, reasoning and all, not cut to their
// last line; the built-in refinement prompt asks for a reply, not for one
// "Action:" line.
func TestWholeReplyActionsStayWhole(t *testing.T) {
	m, prompts, ep := scriptedSetting(t)
	ep.Trajectory.WholeReply = true
	ep.Trajectory.Steps[0].Action = "First some letters.\nAction: xyz"
	ep.Trajectory.Steps[1].Action = "Now vowels.\nAction: aei"
	refined := "All five vowels score more.\nAction: aeiou"
	recs, counts := oneRound(t, m, prompts, ep, func() envs.Env { return &vowels{} }, []string{"Judgement: optimal", "Judgement: suboptimal"}, []string{refined})
	for i, want := range []string{"First some letters.\nAction: xyz", refined} {
		if recs[i].Distill != want {
			t.Errorf("record %d: distilled %q (%s), want the whole reply %q", i, recs[i].Distill, recs[i].Why, want)
		}
	}
	if counts.InvalidRefinements != 0 || counts.Changed != 1 {
		t.Errorf("counts %+v: want the refinement valid and one action changed", counts)
	}

	builtin, err := LoadPrompts("")
	if err != nil {
		t.Fatal(err)
	}
	for _, whole := range []bool{false, true} {
		msgs, err := builtin.render(roleRefine, promptData{Action: "x", Critique: "c", WholeReply: whole})
		if err != nil {
			t.Fatal(err)
		}
		if asksReply := strings.Contains(msgs[1].Content, "Write a better reply"); asksReply != whole || strings.Contains(msgs[1].Content, `one line "Action: ..."`) == whole {
			t.Errorf("built-in refinement prompt for a whole-reply environment (%v) ends %q", whole, msgs[1].Content[max(0, len(msgs[1].Content)-120):])
		}
	}
}

// TestNLQLDistilsTheBestRated runs NLQL's selection on three states of
// three scripted candidates each: the candidate the evaluator gives the
// highest probability of "optimal" is distilled (the first on a tie),
// whatever its sampled verdict; an empty text never is; a candidate too
// long for the context is not judged, and a state with none judged
// teaches nothing.
func TestNLQLDistilsTheBestRated(t *testing.T) {
	m, prompts, ep := scriptedSetting(t)
	var recs []Record
	for _, step := range []int{0, 1, 0} {
		tr := Transition{Episode: ep, Step: step}
		recs = append(recs, Record{T: tr, Action: tr.action()})
	}
	long := "Action: " + strings.Repeat("x", 600)
	candidates := []string{"Action: aei", "", "Action: aeiou", "Action: xyz", "Action: aei", long, long, long, long}
	critiques := []string{"Judgement: optimal", "Judgement: optimal", "Judgement: suboptimal", "Judgement: suboptimal", "Judgement: suboptimal"}
	c := &scripted{calls: [][]string{candidates, constantTexts("Next: \"Done.\"", 5), critiques}, pOptimal: []float64{0.4, 0.9, 0.6, 0.3, 0.3}}
	cfg := rl.DefaultConfig().NLAC
	cfg.Candidates = 3
	roles := &roleModel{cfg: cfg, prompts: prompts, model: m, collector: c, newEnv: func() envs.Env { return &vowels{} },
		instruction: "Write vowels.", context: 512, actionTokens: 8}
	var counts Counts
	if err := roles.improve(context.Background(), recs, "nlql", func(p uint64) uint64 { return p }, &counts); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		distill, why string
		judged       int
	}{
		{"Action: aeiou", "candidate 3 of 3 rated best (p(optimal) 0.60, judged suboptimal)", 3},
		{"Action: xyz", "candidate 1 of 2 rated best (p(optimal) 0.30, judged suboptimal)", 2},
		{"", "no candidate judged: prompts too long", 0},
	} {
		if r := recs[i]; r.Distill != want.distill || r.Why != want.why || len(r.Candidates) != want.judged {
			t.Errorf("state %d: distilled %q (%s) of %d judged candidates, want %q (%s) of %d", i, r.Distill, r.Why, len(r.Candidates), want.distill, want.why, want.judged)
		}
	}
	if counts.NoOptimal != 2 || counts.Changed != 2 || counts.Judgements != 5 || counts.Optimal != 2 || counts.TooLong != 1 || !recs[2].TooLong {
		t.Errorf("counts %+v: want 2 states without an optimal candidate, 2 changed, 5 judgements, 2 optimal, 1 too long (the third)", counts)
	}
}

// tally is a split's counts: with, optimal with, without, optimal
// without.
func tally(s JudgedSplit) [4]int {
	return [4]int{s.With, s.OptimalWith, s.Without, s.OptimalWithout}
}

func constantTexts(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// policyCollector plays episodes with a fixed policy through the real
// runner, recording the starts it was asked for.
type policyCollector struct {
	scripted
	newEnv func() envs.Env
	policy rollout.Policy
	starts []rollout.Start
}

func (c *policyCollector) Collect(ctx context.Context, _ rl.Snapshot, e rl.Episodes) ([]rollout.Trajectory, rl.CollectStats, error) {
	c.starts = append(c.starts, e.Starts...)
	trajs, err := rollout.Run(ctx, rollout.Config{NewEnv: c.newEnv, Parallel: 4, Episodes: len(e.Starts) * e.Group, Group: e.Group,
		Starts: e.Starts, MaxSteps: e.MaxSteps, StepTimeout: e.StepTimeout}, c.policy)
	return trajs, rl.CollectStats{}, err
}

// unresettable is the vowel task failing to start the task of one seed.
type unresettable struct {
	vowels
	seed int64
}

func (u *unresettable) Reset(split envs.Split, seed int64) (string, error) {
	if seed == u.seed {
		return "", errors.New("the task server is down")
	}
	return u.vowels.Reset(split, seed)
}

// TestRolloutFutures checks NLRL's futures: rollouts from the state after
// the action as the actor wrote it, each told as what followed it; a
// transition whose rollouts all fail is left out and the failures
// counted.
func TestRolloutFutures(t *testing.T) {
	newEnv := func() envs.Env { return &unresettable{seed: 2} }
	c := &policyCollector{newEnv: newEnv, policy: rollout.PolicyFunc(func(_ context.Context, batch []rollout.Request) ([]rollout.Response, error) {
		out := make([]rollout.Response, len(batch))
		for i := range out {
			out[i].Text = "Action: aeiou"
		}
		return out, nil
	})}
	var recs []Record
	for _, seed := range []int64{1, 2} {
		ep := &Episode{Trajectory: rollout.Trajectory{Env: "vowels", Split: envs.Train, Seed: seed, Steps: []rollout.Step{
			{Observation: "Write vowels.", Action: "I write.\nAction: aei", ParsedAction: "aei"},
			{Observation: "More vowels.", Action: "Action: xyz", ParsedAction: "xyz", Done: true},
		}, NumSteps: 2}}
		tr := Transition{Episode: ep, Step: 0}
		recs = append(recs, Record{T: tr, Action: tr.action()})
	}
	cfg := rl.DefaultConfig().NLAC
	cfg.Rollouts = 2
	m := &roleModel{cfg: cfg, collector: c, newEnv: newEnv, actionTokens: 8}
	var counts Counts
	open, futures, err := m.rolloutFutures(context.Background(), recs, []int{0, 1}, []string{recs[0].Action, recs[1].Action}, 7, &counts)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.starts) != 2 || !slices.Equal(c.starts[0].Actions, []string{"I write.\nAction: aei"}) {
		t.Errorf("starts %+v: want the action as the actor wrote it", c.starts)
	}
	if !slices.Equal(open, []int{0}) || len(futures) != 1 || len(futures[0]) != 2 {
		t.Fatalf("open %v with futures %q: want transition 0 with two", open, futures)
	}
	want := "Outcome: success (score 1.00, 1 step later).\nNext: \"More vowels.\" (reward 0.50).\nThen: Action: aeiou -> \"Over.\"."
	for _, f := range futures[0] {
		if f != want {
			t.Errorf("future %q, want %q", f, want)
		}
	}
	if counts.FailedRollouts != 2 || !strings.Contains(recs[1].Why, "no NLRL rollout finished: reset: the task server is down") {
		t.Errorf("%d failed rollouts, transition 1: %q", counts.FailedRollouts, recs[1].Why)
	}
	if m.envSteps != 4 {
		t.Errorf("%d environment steps, want 2 rollouts x 2", m.envSteps)
	}
}

// TestWarmupBranches: the warm-up branches from each distinct state of
// its episodes (a task and the actions before it, however many episodes
// reached it) and keeps the branches' actions there that no episode
// took, as the environment compares them, with what really followed;
// branches the environment fails are counted, not kept.
func TestWarmupBranches(t *testing.T) {
	newEnv := func() envs.Env { return &unresettable{seed: 2} }
	// Sample k of every state writes the k-th action: the first two are
	// the expert's (the second in other case), the third is new.
	written := []string{"Action: aeiou", "Action:  AEIOU", "Action: uuu"}
	c := &policyCollector{newEnv: newEnv, policy: rollout.PolicyFunc(func(_ context.Context, batch []rollout.Request) ([]rollout.Response, error) {
		out := make([]rollout.Response, len(batch))
		for i, r := range batch {
			out[i].Text = written[r.Episode%3]
		}
		return out, nil
	})}
	agent := &Episode{Trajectory: rollout.Trajectory{Env: "vowels", Split: envs.Train, Seed: 1, Steps: []rollout.Step{
		{Observation: "Write vowels.", Action: "Action: aeiou", ParsedAction: "aeiou"},
		{Observation: "More vowels.", Action: "Action: xyz", ParsedAction: "xyz", Done: true},
	}, NumSteps: 2}}
	expert := &Episode{Trajectory: rollout.Trajectory{Env: "vowels", Split: envs.Train, Seed: 1, Steps: []rollout.Step{
		{Observation: "Write vowels.", Action: "Action: aeiou", ParsedAction: "aeiou"},
		{Observation: "More vowels.", Action: "Action: aeiou", ParsedAction: "aeiou", Done: true},
	}, NumSteps: 2, Success: true}}
	down := &Episode{Trajectory: rollout.Trajectory{Env: "vowels", Split: envs.Train, Seed: 2, Steps: []rollout.Step{
		{Observation: "Write vowels.", Action: "Action: aeiou", ParsedAction: "aeiou", Done: true},
	}, NumSteps: 1}}
	cfg := rl.DefaultConfig().NLAC
	cfg.Warmup.Branches = 3
	m := &roleModel{cfg: cfg, collector: c, newEnv: newEnv, actionTokens: 8}
	b, err := m.branch(context.Background(), transitionsOf([]*Episode{agent, expert, down}), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.starts) != 3 || len(c.starts[0].Actions) != 0 || !slices.Equal(c.starts[1].Actions, []string{"Action: aeiou"}) || c.starts[2].Seed != 2 {
		t.Errorf("starts %+v: want seed 1 before any action and after aeiou, and seed 2", c.starts)
	}
	if b.States != 3 || b.Played != 6 || b.Failed != 3 {
		t.Errorf("%d states, %d branches played, %d failed; want 3, 6, 3", b.States, b.Played, b.Failed)
	}
	if len(b.Transitions) != 2 {
		t.Fatalf("%d new actions, want uuu in each of seed 1's two states", len(b.Transitions))
	}
	for k, tr := range b.Transitions {
		steps := tr.Episode.Trajectory.Steps
		if tr.Step != k || tr.step().Action != "Action: uuu" || len(steps) != 2 || steps[0].Action != []string{"Action: uuu", "Action: aeiou"}[k] {
			t.Errorf("new action %d: step %d of %+v; want uuu at step %d, after the episodes' own actions", k, tr.Step, steps, k)
		}
	}
	// Both end with a return over 0.5: a success, as the future will say.
	if !b.Transitions[0].Episode.Trajectory.Success || m.envSteps != 12 {
		t.Errorf("branch success %v, %d environment steps (want true, 6 branches x 2)", b.Transitions[0].Episode.Trajectory.Success, m.envSteps)
	}
}

// fickleExpert is the vowel task whose task of seed 2 does not start and
// whose expert is lost in the task of seed 3.
type fickleExpert struct {
	vowels
	seed int64
}

func (f *fickleExpert) Reset(split envs.Split, seed int64) (string, error) {
	if seed == 2 {
		return "", errors.New("the task server is down")
	}
	f.seed = seed
	return f.vowels.Reset(split, seed)
}

func (f *fickleExpert) ExpertAction() (string, error) {
	if f.seed == 3 {
		return "", errors.New("the expert is lost here")
	}
	return f.vowels.ExpertAction()
}

// TestWarmupExpertBranches: the expert plays on from each distinct state
// of the warm-up's episodes; its action joins them where no episode took
// it there, with the expert's continuation as its future, and states
// where the environment or the expert fails are counted, not kept.
func TestWarmupExpertBranches(t *testing.T) {
	newEnv := func() envs.Env { return &fickleExpert{} }
	episode := func(seed int64, actions ...string) *Episode {
		tr := rollout.Trajectory{Env: "vowels", Split: envs.Train, Seed: seed, NumSteps: len(actions)}
		for _, a := range actions {
			tr.Steps = append(tr.Steps, rollout.Step{Observation: "Write vowels.", Action: "Action: " + a, ParsedAction: a})
		}
		return &Episode{Trajectory: tr}
	}
	m := &roleModel{cfg: rl.DefaultConfig().NLAC, newEnv: newEnv}
	ts := transitionsOf([]*Episode{episode(1, "aeiou", "xyz"), episode(2, "aeiou"), episode(3, "xyz")})
	b, err := m.expertBranch(context.Background(), ts)
	if err != nil {
		t.Fatal(err)
	}
	if b.States != 4 || b.Played != 2 || b.Failed != 2 {
		t.Errorf("%d states, %d expert episodes played, %d failed; want 4, 2, 2", b.States, b.Played, b.Failed)
	}
	if len(b.Transitions) != 1 {
		t.Fatalf("%d new actions, want the expert's aeiou after seed 1's aeiou (its xyz failed)", len(b.Transitions))
	}
	tr := b.Transitions[0]
	steps := tr.Episode.Trajectory.Steps
	if tr.Step != 1 || envs.ParseAction(tr.step().Action) != "aeiou" || len(steps) != 2 || steps[0].Action != "Action: aeiou" || !steps[0].Replayed {
		t.Errorf("new action at step %d of %+v; want aeiou at step 1, after the replayed aeiou", tr.Step, steps)
	}
	if !tr.Episode.Trajectory.Success || m.envSteps != 4 {
		t.Errorf("success %v, %d environment steps; want a success, 2 expert episodes x 2 steps", tr.Episode.Trajectory.Success, m.envSteps)
	}
}

// TestTakenByExpert: the first-round judgements are split by whether the
// action is the expert's in its state, found by replaying the episode and
// asking the expert (vowels' expert writes aeiou), without counting the
// replays as the run's environment steps; an environment without an
// expert gives no split.
func TestTakenByExpert(t *testing.T) {
	ep := &Episode{Trajectory: rollout.Trajectory{Env: "vowels", Split: envs.Train, Seed: 1, Steps: []rollout.Step{
		{Observation: "Write vowels.", Action: "Action: aeiou", ParsedAction: "aeiou"},
		{Observation: "More vowels.", Action: "Action: xyz", ParsedAction: "xyz", Done: true},
	}, NumSteps: 2}}
	recs := []Record{{T: Transition{Episode: ep, Step: 0}}, {T: Transition{Episode: ep, Step: 1}}, {T: Transition{Episode: ep, Step: 1}, TooLong: true}}
	roles := &roleModel{newEnv: func() envs.Env { return &vowels{} }}
	got, err := roles.takenByExpert(context.Background(), recs, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0] || got[1] || roles.envSteps != 0 {
		t.Fatalf("taken by the expert %v (want 0: yes, 1: no), %d env steps counted (want 0)", got, roles.envSteps)
	}
	var split JudgedSplit
	split.add(Optimal, 0.9, got[0])
	split.add(Optimal, 0.7, got[1])
	split.add(Unparsed, 0.2, got[1])
	if tally(split) != [4]int{1, 1, 1, 1} || !slices.Equal(split.POptimalWith, []float64{0.9}) || !slices.Equal(split.POptimalWithout, []float64{0.7, 0.2}) {
		t.Errorf("split %+v", split)
	}
	if auc, ok := split.auc(); !ok || auc != 1 {
		t.Errorf("the split's AUC %v (%v), want 1", auc, ok)
	}
	roles.newEnv = func() envs.Env { return noExpert{&vowels{}} }
	if got, err := roles.takenByExpert(context.Background(), recs, []int{0, 1}); got != nil || err != nil {
		t.Errorf("an environment without an expert: %v, %v; want nothing", got, err)
	}
	// An expert that fails in a state drops the measurement, not the run.
	roles.newEnv = func() envs.Env { return failingExpert{&vowels{}} }
	if got, err := roles.takenByExpert(context.Background(), recs, []int{0, 1}); got != nil || err != nil {
		t.Errorf("a failing expert: %v, %v; want nothing and no error", got, err)
	}
}

// failingExpert is vowels with an expert that finds no action.
type failingExpert struct{ envs.Env }

func (failingExpert) ExpertAction() (string, error) { return "", errors.New("no action here") }

// noExpert is vowels without its expert: embedding the interface
// promotes only the Env methods.
type noExpert struct{ envs.Env }

// warmupTexts makes the warm-up's role examples of ts for the vowel task
// with cfg and returns them as text, with how many actions were the
// expert's.
func warmupTexts(t *testing.T, m *llm.Model, prompts *Prompts, cfg rl.NLACConfig, ts []Transition) ([]string, int) {
	t.Helper()
	roles := &roleModel{cfg: cfg, prompts: prompts, model: m, newEnv: func() envs.Env { return &vowels{} },
		instruction: "Write vowels.", context: 512, actionTokens: 8}
	seqs, optimal, err := roles.warmupSequences(context.Background(), ts)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(seqs))
	for i, s := range seqs {
		if texts[i], err = m.Detokenize(s.Tokens, false); err != nil {
			t.Fatal(err)
		}
	}
	return texts, optimal
}

// TestWarmupBalancesJudgements: in the warm-up, an actor that mostly acts
// as the expert gives the evaluator mostly "optimal" examples; with
// nlac.warmup.balance the suboptimal ones are repeated to as many, and the
// other roles follow the evaluator's count.
func TestWarmupBalancesJudgements(t *testing.T) {
	m, prompts, ep := scriptedSetting(t) // its actions: xyz, then aei
	expertFirst := &Episode{Trajectory: rollout.Trajectory{Env: "vowels", Split: envs.Train, Seed: 2, Steps: []rollout.Step{
		{Observation: "Write vowels.", Action: "Action: aeiou", ParsedAction: "aeiou"},
		{Observation: "More vowels.", Action: "Action: aeiou", ParsedAction: "aeiou", Done: true},
	}, NumSteps: 2}}
	// Two of the three actions are the expert's.
	ts := []Transition{{Episode: expertFirst, Step: 0}, {Episode: expertFirst, Step: 1}, {Episode: ep, Step: 0}}
	for _, tc := range []struct {
		balance                 bool
		optimal, suboptimal, nt int
	}{{false, 2, 1, 6}, {true, 2, 2, 8}} {
		cfg := rl.DefaultConfig().NLAC
		cfg.Method = "self_distill" // the evaluator and the refinement alone
		cfg.Warmup.Balance = tc.balance
		texts, optimal := warmupTexts(t, m, prompts, cfg, ts)
		judged := map[string]int{}
		for _, text := range texts {
			for _, j := range []string{"optimal", "suboptimal"} {
				if strings.HasSuffix(strings.TrimSpace(text), "Judgement: "+j) {
					judged[j]++
				}
			}
		}
		if optimal != 2 || len(texts) != tc.nt || judged["optimal"] != tc.optimal || judged["suboptimal"] != tc.suboptimal {
			t.Errorf("balance %v: %d of the actions the expert's (want 2), %d sequences (want %d), evaluator examples %v (want %d optimal, %d suboptimal)",
				tc.balance, optimal, len(texts), tc.nt, judged, tc.optimal, tc.suboptimal)
		}
	}
}

// TestWarmupBalancesOutcomes: the warm-up's futures are mostly of
// successful episodes; with nlac.warmup.balance_outcomes the successor
// model gets the failed episode's future repeated to as many.
func TestWarmupBalancesOutcomes(t *testing.T) {
	m, prompts, failed := scriptedSetting(t)
	succeeded := &Episode{Trajectory: rollout.Trajectory{Env: "vowels", Split: envs.Train, Seed: 2, Steps: []rollout.Step{
		{Observation: "Write vowels.", Action: "Action: aeiou", ParsedAction: "aeiou"},
		{Observation: "More vowels.", Action: "Action: aeiou", ParsedAction: "aeiou", Done: true},
	}, NumSteps: 2, Success: true, Score: 1}}
	ts := []Transition{{Episode: succeeded, Step: 0}, {Episode: succeeded, Step: 1}, {Episode: failed, Step: 0}}
	for _, tc := range []struct {
		balance          bool
		success, failure int
	}{{false, 2, 1}, {true, 2, 2}} {
		cfg := rl.DefaultConfig().NLAC
		cfg.Merge = "template" // no merge examples, whose targets are futures too
		cfg.Warmup.BalanceOutcomes = tc.balance
		texts, _ := warmupTexts(t, m, prompts, cfg, ts)
		futures := map[string]int{}
		for _, text := range texts {
			// The successor model's examples end in a future, which holds
			// its outcome line; the evaluator's critiques hold one too, and
			// end in a judgement; the refinements hold none.
			if strings.Contains(text, "Judgement:") {
				continue
			}
			for _, o := range []string{"success", "failure"} {
				if strings.Contains(text, "Outcome: "+o) {
					futures[o]++
				}
			}
		}
		if futures["success"] != tc.success || futures["failure"] != tc.failure {
			t.Errorf("balance_outcomes %v: futures %v, want %d of success and %d of failure", tc.balance, futures, tc.success, tc.failure)
		}
	}
}

// TestSplitOutcome finds a description's outcome line first or last, or
// alone, and nowhere else.
func TestSplitOutcome(t *testing.T) {
	for _, tc := range []struct {
		d, line, rest string
		first         bool
	}{
		{"Outcome: success.\nNext: a page.", "Outcome: success.", "Next: a page.", true},
		{"Next: a page.\nThen: more.\nOutcome: failure.", "Outcome: failure.", "Next: a page.\nThen: more.", false},
		{"  Outcome: failure (score 0.00).  ", "Outcome: failure (score 0.00).", "", true},
		{"Next: a page.\nOutcome: success.\nThen: more.", "", "Next: a page.\nOutcome: success.\nThen: more.", false},
	} {
		line, rest, first := splitOutcome(tc.d)
		if line != tc.line || rest != tc.rest || first != tc.first {
			t.Errorf("splitOutcome(%q) = %q, %q, %v; want %q, %q, %v", tc.d, line, rest, first, tc.line, tc.rest, tc.first)
		}
	}
	// A future cut to its outcome line alone merges without a stray line.
	e := &Episode{Trajectory: episode(7, true)}
	got := futureForm{outcomeFirst: true}.templateMerge(Transition{Episode: e, Step: 0}, "Action: x", "Outcome: success (score 1.00).")
	if !strings.HasPrefix(got, "Outcome: success (score 1.00, 1 step later).\nNext: ") || strings.Contains(got, "\n\n") || strings.HasSuffix(got, "\n") {
		t.Errorf("merged %q", got)
	}
}

// TestWarmupJudgesByExpertOrOutcome: the evaluator's warm-up critiques
// judge an action optimal when it is the expert's (nlac.warmup.judge
// expert), saying whether the expert acts the same, or when its episode
// succeeded (outcome), the verdict right after the outcome, with nothing
// of the expert between.
func TestWarmupJudgesByExpertOrOutcome(t *testing.T) {
	m, prompts, _ := scriptedSetting(t)
	one := func(success bool, action string) *Episode {
		return &Episode{Trajectory: rollout.Trajectory{Env: "vowels", Split: envs.Train, Seed: 2, Steps: []rollout.Step{
			{Observation: "Write vowels.", Action: "Action: " + action, ParsedAction: action, Done: true},
		}, NumSteps: 1, Success: success}}
	}
	// A success with another action than the expert's, a failure with the
	// expert's.
	ts := []Transition{{Episode: one(true, "xyz"), Step: 0}, {Episode: one(false, "aeiou"), Step: 0}}
	for _, tc := range []struct {
		judge string
		want  []string // the critiques' endings
		// refined: whether the refinement has examples. Judged by the
		// expert, xyz is condemned and refined into aeiou; judged by the
		// outcome, xyz is approved (a refinement never sees an approving
		// critique) and aeiou, condemned, is the expert's already.
		refined bool
	}{
		{"expert", []string{"An expert would do: Action: aeiou\nJudgement: suboptimal", "An expert acts the same.\nJudgement: optimal"}, true},
		{"outcome", []string{"assistant\nOutcome: success (score 0.00).\nJudgement: optimal", "assistant\nOutcome: failure (score 0.00).\nJudgement: suboptimal"}, false},
	} {
		cfg := rl.DefaultConfig().NLAC
		cfg.Method = "self_distill"
		cfg.Warmup.Judge = tc.judge
		texts, _ := warmupTexts(t, m, prompts, cfg, ts)
		var got []string
		for _, text := range texts {
			if text = strings.TrimSpace(text); strings.Contains(text, "Judgement: ") {
				got = append(got, text)
			}
		}
		found := 0
		for _, w := range tc.want {
			for _, g := range got {
				if strings.HasSuffix(g, w) {
					found++
					break
				}
			}
		}
		if found != len(tc.want) {
			t.Errorf("judge %s: critiques %q, want them to end in %q", tc.judge, got, tc.want)
		}
		refinements := 0
		for _, text := range texts {
			if strings.Contains(text, "Improve") { // the refinement's system prompt
				refinements++
				if !strings.Contains(text, "Action: xyz =>") {
					t.Errorf("judge %s: a refinement example of another action than xyz: %q", tc.judge, text)
				}
			}
		}
		if refinements > 0 != tc.refined {
			t.Errorf("judge %s: %d refinement examples, want them %v", tc.judge, refinements, map[bool]string{true: "some", false: "none"}[tc.refined])
		}
	}
}

// TestRankedVerdicts: with nlac.refine_share the verdicts follow the
// evaluator's probabilities of "optimal", whatever the critiques wrote,
// while the counts keep what they wrote.
func TestRankedVerdicts(t *testing.T) {
	// The first round: of the four critiques that fit, the ceil(0.4 x 4)
	// = 2 rated lowest are condemned; of the two tied at 0.3 the one that
	// does not approve its action goes first. The critique that does not
	// fit gets no verdict.
	cs := []critique{
		{text: "Good.\nJudgement: optimal", pOptimal: 0.9, fits: true},
		{text: "Judgement: optimal", pOptimal: 0.3, fits: true},
		{text: "Too long.", pOptimal: 0, fits: false},
		{text: "Bad.\nJudgement: suboptimal", pOptimal: 0.3, fits: true},
		{text: "Poor.", pOptimal: 0.2, fits: true},
	}
	var bar float64
	got := rankVerdicts(cs, 0.4, 0, &bar)
	if want := []Judgement{Optimal, Optimal, Unparsed, Suboptimal, Suboptimal}; !slices.Equal(got, want) {
		t.Errorf("first round: %v, want %v", got, want)
	}
	if bar != 0.3 {
		t.Errorf("bar %v, want 0.3, the highest p(optimal) condemned", bar)
	}
	// A later round: a refinement stands only when rated above the bar.
	later := []critique{{pOptimal: 0.3, fits: true}, {pOptimal: 0.31, fits: true}}
	if got := rankVerdicts(later, 0.4, 1, &bar); !slices.Equal(got, []Judgement{Suboptimal, Optimal}) {
		t.Errorf("later round: %v, want suboptimal at the bar and optimal above it", got)
	}
	// Any share above 0 condemns at least one action.
	one := []critique{{text: "Judgement: optimal", pOptimal: 0.99, fits: true}}
	if got := rankVerdicts(one, 0.01, 0, &bar); got[0] != Suboptimal {
		t.Errorf("share 0.01 of one critique: %v, want it condemned", got[0])
	}

	// Through policy improvement, two rounds: every critique approves,
	// the two actions rated lowest (records 1 and 3, 0.2 and 0.1) are
	// refined all the same, and their refinements are critiqued again
	// against the bar 0.2: record 1's (0.15) is condemned and refined
	// again, record 3's (0.5) stands.
	m, prompts, ep := scriptedSetting(t)
	cfg := rl.DefaultConfig().NLAC
	cfg.RefineShare, cfg.Refinements = 0.5, 2
	approving := constantTexts("Fine.\nJudgement: optimal", 4)
	c := &scripted{calls: [][]string{
		constantTexts(failedFuture, 4), approving, {"Action: aeiou", "Action: aeiou"},
		constantTexts(failedFuture, 2), approving[:2], {"Action: eio"},
	}, pOptimal: []float64{0.5, 0.5, 0.5, 0.5, 0.9, 0.2, 0.7, 0.1, 0.15, 0.5}}
	recs, counts := improveScripted(t, m, prompts, ep, func() envs.Env { return &vowels{} }, cfg, c, 4)
	want := []string{"Action: xyz", "Action: eio", "Action: xyz", "Action: aeiou"}
	for i, r := range recs {
		if r.Distill != want[i] {
			t.Errorf("ranked, record %d: distilled %q (%s), want %q", i, r.Distill, r.Why, want[i])
		}
		rd := r.Rounds[0]
		condemned := i%2 == 1
		if !rd.Ranked || rd.Written != Optimal || (rd.Judgement == Suboptimal) != condemned {
			t.Errorf("ranked, record %d: %+v", i, rd)
		}
		// The refinement reads the verdict that rules.
		if wantCritique := map[bool]string{false: "Fine.\nJudgement: optimal", true: "Fine.\nJudgement: suboptimal"}[condemned]; rd.Critique != wantCritique {
			t.Errorf("ranked, record %d: critique %q, want %q", i, rd.Critique, wantCritique)
		}
	}
	// The counts are of the written verdicts: all 6 optimal, 3 of them
	// overruled.
	if counts.Judgements != 6 || counts.Optimal != 6 || counts.Overruled != 3 || counts.Refinements != 3 || tally(counts.ByOutcome) != [4]int{0, 0, 4, 4} {
		t.Errorf("ranked: counts %+v", counts)
	}

	// A critique without a verdict (none asked for) is ranked like the
	// others, but not counted as overruled, and unparsed_judgement no
	// longer rules it.
	cfg.RefineShare, cfg.Refinements, cfg.AskJudgement, cfg.UnparsedJudgement = 0.25, 1, false, "skip"
	c = &scripted{calls: [][]string{
		constantTexts(failedFuture, 4), {"No verdict.", "Judgement: suboptimal", "Judgement: optimal", "Judgement: optimal"}, {"Action: aeiou"},
	}, pOptimal: []float64{0.5, 0.5, 0.5, 0.5, 0.1, 0.9, 0.8, 0.7}}
	recs, counts = improveScripted(t, m, prompts, ep, func() envs.Env { return &vowels{} }, cfg, c, 4)
	want = []string{"Action: aeiou", "Action: aei", "Action: xyz", "Action: aei"}
	for i, r := range recs {
		if r.Distill != want[i] {
			t.Errorf("unparsed, record %d: distilled %q (%s), want %q", i, r.Distill, r.Why, want[i])
		}
	}
	if r := recs[0].Rounds[0]; r.Written != Unparsed || r.Judgement != Suboptimal || r.Critique != "No verdict.\nJudgement: suboptimal" {
		t.Errorf("unparsed: %+v", r)
	}
	if counts.Unparsed != 1 || counts.Overruled != 1 || counts.Refinements != 1 {
		t.Errorf("unparsed: counts %+v, want 1 unparsed, 1 overruled, 1 refinement", counts)
	}
}

// TestRefinementSamples: with nlac.refine_samples 3 the refinement taken
// for each condemned action is the first sample that names another
// action the environment accepts, and the first sample, with the rules
// of a failed refinement, when none does.
func TestRefinementSamples(t *testing.T) {
	m, prompts, ep := scriptedSetting(t)
	cfg := rl.DefaultConfig().NLAC
	cfg.RefineSamples = 3
	// The actions refined: xyz, aei, xyz (the episode's steps in turn).
	refinements := []string{
		"Action: xyz", "Action: 123", "Action: aeiou", // a repeat, one the environment rejects, then one that improves
		"Action: aei", "Action: aei", "Action: aei", // only repeats
		"", "Action: eio", "Action: aeiou", // no action, then the first that improves
	}
	c := &scripted{calls: [][]string{constantTexts(failedFuture, 3), constantTexts("Poor.\nJudgement: suboptimal", 3), refinements}}
	recs, counts := improveScripted(t, m, prompts, ep, func() envs.Env { return &vowels{} }, cfg, c, 3)
	for i, want := range []struct {
		distill string
		sample  int
		valid   bool
	}{{"Action: aeiou", 2, true}, {"Action: aei", 0, false}, {"Action: eio", 1, true}} {
		rd := recs[i].Rounds[0]
		if recs[i].Distill != want.distill || rd.Sample != want.sample || rd.Valid != want.valid {
			t.Errorf("record %d: distilled %q (%s), sample %d, valid %v; want %q, sample %d, valid %v",
				i, recs[i].Distill, recs[i].Why, rd.Sample, rd.Valid, want.distill, want.sample, want.valid)
		}
	}
	if counts.Refinements != 3 || counts.UnchangedRefinements != 1 || counts.InvalidRefinements != 0 || counts.Changed != 2 ||
		counts.Resampled != 2 || counts.RepeatingSamples != 4 {
		t.Errorf("counts %+v, want 3 refinements, 1 repeating its action, none invalid, 2 actions changed, 2 taken after the first sample, 4 samples repeating their action", counts)
	}
	// The log says which sample was taken.
	var log strings.Builder
	WriteRecord(&log, &recs[0])
	if !strings.Contains(log.String(), "Refinement (valid, sample 3): `Action: aeiou`") {
		t.Errorf("log of record 0 does not name the sample taken:\n%s", log.String())
	}
}

// TestRewrittenOverruled: with nlac.rewrite_overruled a critique that the
// rank condemns but that approves its action is written again after the
// same prompt, from its reasoning without the approval and the cue for
// the expert's action, and it rules with the verdict suboptimal; a
// critique that condemns its action itself stays as written.
func TestRewrittenOverruled(t *testing.T) {
	for critique, lead := range map[string]string{
		"Outcome: failure. An expert acts the same.\nJudgement: optimal":                          "Outcome: failure. An expert would do:",
		"Good move.\nJudgement: optimal":                                                          "Good move. An expert would do:",
		"Outcome: success. An expert acts the same, 7 out of 12 are correct.\nJudgement: optimal": "Outcome: success. An expert would do:",
		"Judgement: optimal": "An expert would do:",
		"Outcome: failure. an expert acts the same.\nJudgement: optimal":        "Outcome: failure. An expert would do:",
		"Outcome: failure. An expert would do: Action: xyz\nJudgement: optimal": "Outcome: failure. An expert would do:",
	} {
		if got := condemningLead(critique); got != lead {
			t.Errorf("condemningLead(%q) = %q, want %q", critique, got, lead)
		}
	}

	// Of four critiques the two rated lowest are condemned: record 0's
	// approves its action and is written again (its new text ends
	// "optimal", which the rank overrules), record 1's condemns it.
	m, prompts, ep := scriptedSetting(t)
	cfg := rl.DefaultConfig().NLAC
	cfg.RefineShare, cfg.RewriteOverruled = 0.5, true
	approving := "Outcome: failure. An expert acts the same.\nJudgement: optimal"
	c := &scripted{calls: [][]string{
		constantTexts(failedFuture, 4),
		{approving, "Bad.\nJudgement: suboptimal", "Fine.\nJudgement: optimal", "Judgement: optimal"},
		{" Action: aeiou\nJudgement: optimal"},
		{"Action: aeiou", "Action: eio"},
	}, pOptimal: []float64{0.5, 0.5, 0.5, 0.5, 0.1, 0.2, 0.9, 0.8}}
	recs, counts := improveScripted(t, m, prompts, ep, func() envs.Env { return &vowels{} }, cfg, c, 4)

	rd := recs[0].Rounds[0]
	if want := "Outcome: failure. An expert would do: Action: aeiou\nJudgement: suboptimal"; rd.Critique != want || rd.FirstCritique != approving || rd.Judgement != Suboptimal || rd.Written != Optimal {
		t.Errorf("record 0: critique %q (first %q), judgement %s (written %s); want %q, first %q, suboptimal by rank",
			rd.Critique, rd.FirstCritique, rd.Judgement, rd.Written, want, approving)
	}
	if rd := recs[1].Rounds[0]; rd.FirstCritique != "" || rd.Critique != "Bad.\nJudgement: suboptimal" {
		t.Errorf("record 1: critique %q (first %q), want its own, not written again", rd.Critique, rd.FirstCritique)
	}
	// The new critique went on from the old one's prompt and the lead.
	critiquePrompt, rewritePrompt := c.prompts[1][0], c.prompts[2][0]
	lead, err := m.Detokenize(rewritePrompt[min(len(critiquePrompt), len(rewritePrompt)):], false)
	if len(c.prompts[2]) != 1 || !slices.Equal(rewritePrompt[:min(len(critiquePrompt), len(rewritePrompt))], critiquePrompt) || err != nil || lead != "Outcome: failure. An expert would do:" {
		t.Errorf("the rewrite's %d prompts: the first continues the critique's with %q (%v), want one prompt and the lead", len(c.prompts[2]), lead, err)
	}
	if recs[0].Distill != "Action: aeiou" || recs[1].Distill != "Action: eio" {
		t.Errorf("distilled %q and %q, want the refinements", recs[0].Distill, recs[1].Distill)
	}
	if counts.Overruled != 1 || counts.Rewritten != 1 || counts.Refinements != 2 {
		t.Errorf("counts %+v, want 1 overruled, 1 written again, 2 refinements", counts)
	}
	var log strings.Builder
	WriteRecord(&log, &recs[0])
	if !strings.Contains(log.String(), "Critique as first written, overruled:\n> Outcome: failure. An expert acts the same.") ||
		!strings.Contains(log.String(), "written again to condemn the action") {
		t.Errorf("log of record 0 does not show both critiques:\n%s", log.String())
	}

	// A critique without a verdict (none asked for) is written again too;
	// a new text that names nothing leaves the first critique, counted.
	cfg.AskJudgement, cfg.UnparsedJudgement = false, "optimal"
	c = &scripted{calls: [][]string{
		constantTexts(failedFuture, 4),
		{"No verdict.", "Fine.\nJudgement: optimal", "Fine.\nJudgement: optimal", "Judgement: optimal"},
		{"", "Action: eio"},
		{"Action: aeiou", "Action: eio"},
	}, pOptimal: []float64{0.5, 0.5, 0.5, 0.5, 0.1, 0.2, 0.9, 0.8}}
	recs, counts = improveScripted(t, m, prompts, ep, func() envs.Env { return &vowels{} }, cfg, c, 4)
	if rd := recs[0].Rounds[0]; rd.FirstCritique != "" || rd.Critique != "No verdict.\nJudgement: suboptimal" {
		t.Errorf("unwritten: critique %q (first %q), want the first with the ruling verdict", rd.Critique, rd.FirstCritique)
	}
	if rd := recs[1].Rounds[0]; rd.Critique != "Fine. An expert would do: Action: eio\nJudgement: suboptimal" {
		t.Errorf("written again: critique %q", rd.Critique)
	}
	if counts.Overruled != 1 || counts.Rewritten != 1 || counts.Unwritten != 1 {
		t.Errorf("counts %+v, want 1 overruled (the unparsed one is not), 1 written again, 1 not", counts)
	}
	if note := counts.rankNote(); !strings.Contains(note, "1 critiques written again to condemn their action (nlac.rewrite_overruled), 1 that could not be") {
		t.Errorf("iteration note %q does not count them", note)
	}
}

// TestReplacedFromActor: with nlac.replace_with actor a condemned action
// is replaced by the best-rated of the actor's candidates at its state
// (the first on a tie), judged from their futures; candidates that repeat
// the action, name none or that the environment rejects are not judged;
// a state with no candidate rated above its action keeps it, saying why.
func TestReplacedFromActor(t *testing.T) {
	m, prompts, ep := scriptedSetting(t)
	cfg := rl.DefaultConfig().NLAC
	cfg.ReplaceWith, cfg.Candidates = "actor", 6
	c := &scripted{calls: [][]string{
		constantTexts(failedFuture, 2),
		{"Bad.\nJudgement: suboptimal", "Fine.\nJudgement: optimal"},
		// The actor's 6 candidates at record 0's state: its own action
		// again, no action, one the environment rejects (no letters), and
		// three others.
		{"Action: xyz", "\n", "Action: 123", "Action: aeiou", "Action: eio", "Action: oui"},
		constantTexts(failedFuture, 3), // the three new candidates' futures
		{"Good.\nJudgement: optimal", "Better.\nJudgement: suboptimal", "Also.\nJudgement: suboptimal"},
	},
		// The successor model's p(success) of the two actions, record 0's
		// and 1's critiques, then the candidates': the one written
		// suboptimal is rated higher, and the rating rules; the last ties.
		pOptimal: []float64{0.5, 0.5, 0.2, 0.9, 0.3, 0.8, 0.8}}
	recs, counts := improveScripted(t, m, prompts, ep, func() envs.Env { return &vowels{} }, cfg, c, 2)

	if len(c.prompts[2]) != 1 || !slices.Equal(c.prompts[2][0], ep.Trajectory.Steps[0].PromptTokenIDs) {
		t.Errorf("the candidates were sampled from prompts %v, want the actor's own at record 0's state", c.prompts[2])
	}
	rd := recs[0].Rounds[0]
	if recs[0].Distill != "Action: eio" || !rd.FromActor || !rd.Valid || rd.Refined != "Action: eio" || rd.Sample != 1 ||
		recs[0].Why != "replaced in round 1 by the actor's candidate 2, rated best (p(optimal) 0.80)" {
		t.Errorf("record 0 distils %q (%s; round %+v), want the candidate rated best, Action: eio", recs[0].Distill, recs[0].Why, rd)
	}
	if len(recs[0].Candidates) != 3 || recs[0].Candidates[0].Action != "Action: aeiou" || recs[0].Candidates[1].POptimal != 0.8 {
		t.Errorf("record 0's candidates %+v, want the three new actions the environment accepts, judged", recs[0].Candidates)
	}
	if recs[1].Distill != "Action: aei" || len(recs[1].Candidates) != 0 {
		t.Errorf("record 1, judged optimal, distils %q with %d candidates", recs[1].Distill, len(recs[1].Candidates))
	}
	if counts.Replaced != 1 || counts.Unreplaced != 0 || counts.Changed != 1 || counts.Refinements != 0 || counts.InvalidRefinements != 0 || counts.Judgements != 2 || counts.Optimal != 1 {
		t.Errorf("counts %+v: want 1 replaced and changed, no refinement, and the batch's 2 judgements alone", counts)
	}
	var log strings.Builder
	WriteRecord(&log, &recs[0])
	if !strings.Contains(log.String(), "Replacement: the actor's candidate 2 below, rated best: `Action: eio`") || !strings.Contains(log.String(), "Candidate 2: `Action: eio`") {
		t.Errorf("the log does not show the replacement:\n%s", log.String())
	}

	// No candidate but the action itself, or none rated above it: the
	// action is kept, and the record says why.
	for _, tc := range []struct {
		candidates []string
		pOptimal   []float64
		judged     int
		why        string
	}{
		{constantTexts("Action: xyz", 6), nil, 0, "not replaced (the actor's 6 candidates name no action or only ones already taken): the action kept"},
		{constantTexts("Action: aeiou", 6), []float64{0.5, 0.6, 0.4}, 1, "not replaced (no candidate rated above the action's p(optimal) 0.60): the action kept"},
	} {
		calls := [][]string{constantTexts(failedFuture, 1), {"Bad.\nJudgement: suboptimal"}, tc.candidates}
		if tc.judged > 0 {
			calls = append(calls, constantTexts(failedFuture, tc.judged), constantTexts("Meh.\nJudgement: optimal", tc.judged))
		}
		c = &scripted{calls: calls, pOptimal: tc.pOptimal}
		recs, counts = improveScripted(t, m, prompts, ep, func() envs.Env { return &vowels{} }, cfg, c, 1)
		if recs[0].Distill != "Action: xyz" || recs[0].Why != tc.why || counts.Replaced != 0 || counts.Unreplaced != 1 || counts.InvalidRefinements != 0 {
			t.Errorf("distils %q (%s), counts %+v; want the action kept: %s", recs[0].Distill, recs[0].Why, counts, tc.why)
		}
	}
}
