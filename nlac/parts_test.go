package nlac

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/envs"
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
func TestBellmanTargets(t *testing.T) {
	e := &Episode{Iteration: 1, Trajectory: episode(7, true)}
	last := Transition{Episode: e, Step: 2}
	if !last.Done() {
		t.Fatal("the last step is not terminal")
	}
	got := terminalTarget(last)
	for _, want := range []string{`Next: "Thank you for shopping."`, "reward 1.00", "the episode ends", "Outcome: success (score 1.00)."} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal target lacks %q:\n%s", want, got)
		}
	}
	failed := &Episode{Trajectory: episode(8, false)}
	failed.Trajectory.Truncated = true
	if got := terminalTarget(Transition{Episode: failed, Step: 2}); !strings.Contains(got, "Outcome: failure (score 0.00).") || !strings.Contains(got, "step limit") {
		t.Errorf("truncated failure's target: %s", got)
	}

	first := Transition{Episode: e, Step: 0}
	if first.Done() {
		t.Fatal("the first step is terminal")
	}
	prediction := "Next: the page shows the shoes.\nThen: the agent buys them.\nOutcome: success (score 1.00)."
	got = templateMerge(first, "Action: click[B01]", prediction)
	wantOrder := []string{`Next: "Results: [B01] Red shoes $35 | [B02] Blue shoes $20" (reward 0.00).`, "Then: Action: click[B01].", "Next: the page shows the shoes.", "Outcome: success (score 1.00)."}
	at := 0
	for _, w := range wantOrder {
		i := strings.Index(got[at:], w)
		if i < 0 {
			t.Fatalf("merged target lacks %q after position %d:\n%s", w, at, got)
		}
		at += i + len(w)
	}
	// A long prediction is cut, but its outcome line survives.
	long := strings.Repeat("the agent browses on; ", 60) + "\nOutcome: failure (score 0.00)."
	if got := templateMerge(first, "Action: x", long); !strings.HasSuffix(got, "\nOutcome: failure (score 0.00).") || len(got) > 1000 {
		t.Errorf("long prediction merged into %d characters, ending %q", len(got), got[max(0, len(got)-40):])
	}

	p, err := LoadPrompts("")
	if err != nil {
		t.Fatal(err)
	}
	d := promptData{Instruction: "Buy.", History: transcript(e, 0, views(4)[0]), Action: "Action: search[red shoes]"}
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

	// The real future, the self-distillation ablation's and the
	// warm-up's: detail first, outcome last.
	got = TrueFuture(first)
	for _, want := range []string{"Next: \"Results:", "Then: Action: click[B01] -> \"Red shoes", "Then: Action: click[Buy Now] -> \"Thank you", "Outcome: success (score 1.00, 2 steps later)."} {
		if !strings.Contains(got, want) {
			t.Errorf("true future lacks %q:\n%s", want, got)
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

func TestParseJudgement(t *testing.T) {
	cases := map[string]Judgement{
		"The action is fine.\nJudgement: optimal":                      Optimal,
		"judgment: Suboptimal":                                         Suboptimal,
		"**Judgement:** sub-optimal":                                   Suboptimal,
		"Judgement - not optimal.":                                     Suboptimal,
		"Judgement: suboptimal at first... Revised judgement: optimal": Optimal,
		"The action looks optimal to me.":                              Unparsed,
		"":                                                             Unparsed,
		"Judgement: unclear":                                           Unparsed,
	}
	for text, want := range cases {
		if got := ParseJudgement(text); got != want {
			t.Errorf("%q: %v, want %v", text, got, want)
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
	if msgs, err := p.render(roleSuccessor, promptData{Action: "Action: go"}); err != nil || !strings.Contains(msgs[0].Content, "Outcome: success") {
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
}
