package rollout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/rollout"
)

func expertTrajectories(t *testing.T, n int) []rollout.Trajectory {
	t.Helper()
	cfg := rollout.Config{NewEnv: newGuess, Parallel: 3, Episodes: n, Split: envs.Test}
	trajs, err := rollout.Run(context.Background(), cfg, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	return trajs
}

func TestTrajectoriesRoundTripThroughJSONLines(t *testing.T) {
	trajs := expertTrajectories(t, 6)
	trajs[2].Steps[0].Info.Extra = map[string]any{"page": "search"}
	var buf bytes.Buffer
	w := rollout.NewWriter(&buf)
	for i := range trajs {
		if err := w.Write(&trajs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != len(trajs) {
		t.Fatalf("%d lines for %d trajectories", lines, len(trajs))
	}
	back, err := rollout.ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, trajs) {
		t.Fatalf("round trip changed the trajectories:\n%+v\n%+v", back[0], trajs[0])
	}
}

func TestTrajectoryFieldNames(t *testing.T) {
	tr := expertTrajectories(t, 1)[0]
	data, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	// The names documented in docs/trajectories.md.
	for _, name := range []string{"env", "split", "seed", "instruction", "steps", "final_observation",
		"return", "score", "success", "num_steps", "truncated"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("trajectory has no field %q", name)
		}
	}
	var steps []map[string]json.RawMessage
	if err := json.Unmarshal(fields["steps"], &steps); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"observation", "action", "parsed_action", "token_ids", "logprobs", "reward", "done", "info"} {
		if _, ok := steps[0][name]; !ok {
			t.Errorf("step has no field %q", name)
		}
	}
}

func TestReaderReportsTheLineOfMalformedInput(t *testing.T) {
	good, err := json.Marshal(expertTrajectories(t, 1)[0])
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for name, tc := range map[string]struct {
		line string
		want string
	}{
		"not json":       {`{"env": "guess", `, "line 3: unexpected EOF"},
		"unknown field":  {edit(func(m map[string]any) { m["rewards"] = 1 }), `line 3: json: unknown field "rewards"`},
		"wrong type":     {edit(func(m map[string]any) { m["seed"] = "x" }), "line 3: json: cannot unmarshal string"},
		"no env":         {edit(func(m map[string]any) { m["env"] = "" }), "line 3: env is empty"},
		"bad split":      {edit(func(m map[string]any) { m["split"] = "dev" }), `line 3: unknown split "dev"`},
		"num steps":      {edit(func(m map[string]any) { m["num_steps"] = 99.0 }), "line 3: num_steps is 99 but there are"},
		"return":         {edit(func(m map[string]any) { m["return"] = 5.0 }), "line 3: return is 5 but the rewards sum to 1"},
		"not finished":   {edit(func(m map[string]any) { m["truncated"] = false; lastStep(m)["done"] = false }), "line 3: last step is not done"},
		"two values":     {string(good) + " {}", "line 3: unexpected data after the trajectory"},
		"token mismatch": {edit(func(m map[string]any) { firstStep(m)["logprobs"] = []float64{-1} }), "line 3: step 1: 2 token_ids but 1 logprobs"},
	} {
		input := string(good) + "\n\n" + tc.line + "\n" + string(good) + "\n"
		r := rollout.NewReader(strings.NewReader(input))
		if _, err := r.Read(); err != nil {
			t.Fatalf("%s: first line: %v", name, err)
		}
		_, err := r.Read()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", name, err, tc.want)
		}
	}
	if _, err := rollout.NewReader(strings.NewReader("")).Read(); err != io.EOF {
		t.Fatalf("empty input: got %v, want io.EOF", err)
	}
}

// firstStep returns the first step of a trajectory decoded as a map.
func firstStep(m map[string]any) map[string]any {
	return m["steps"].([]any)[0].(map[string]any)
}

// lastStep returns the last step of a trajectory decoded as a map.
func lastStep(m map[string]any) map[string]any {
	steps := m["steps"].([]any)
	return steps[len(steps)-1].(map[string]any)
}

func TestSummarize(t *testing.T) {
	step := func(valid bool) rollout.Step { return rollout.Step{Info: envs.Info{ValidAction: valid}} }
	trajs := []rollout.Trajectory{
		{Success: true, Return: 1, Score: 1, Steps: []rollout.Step{step(true), step(true)}},
		{Success: false, Return: 0, Score: 0.5, Steps: []rollout.Step{step(false), step(true), step(true), step(true)}},
		{Success: true, Return: 1, Score: 1, Steps: []rollout.Step{step(true), step(true)}},
		{Success: true, Return: 1, Score: 1, Steps: []rollout.Step{step(true), step(true)}},
		{Error: "server down", Steps: []rollout.Step{step(false)}},
	}
	s := rollout.Summarize(trajs)
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if s.Episodes != 4 || s.Errors != 1 {
		t.Fatalf("episodes %d errors %d", s.Episodes, s.Errors)
	}
	// success 1,0,1,1: mean 0.75, sample std 0.5, SE 0.25.
	near("success rate", s.SuccessRate, 0.75)
	near("success rate SE", s.SuccessRateSE, 0.25)
	near("mean return", s.MeanReturn, 0.75)
	// score 1,0.5,1,1: mean 0.875, sample std 0.25, SE 0.125.
	near("mean score", s.MeanScore, 0.875)
	near("mean score SE", s.MeanScoreSE, 0.125)
	// steps 2,4,2,2: mean 2.5, sample std 1, SE 0.5.
	near("mean steps", s.MeanSteps, 2.5)
	near("mean steps SE", s.MeanStepsSE, 0.5)
	// 1 invalid step in 10 (the errored episode's step is left out).
	near("invalid rate", s.InvalidActionRate, 0.1)
	near("invalid rate SE", s.InvalidActionRateSE, math.Sqrt(0.1*0.9/10))

	if empty := rollout.Summarize(nil); empty != (rollout.Summary{}) {
		t.Fatalf("summary of nothing: %+v", empty)
	}
}

func TestDemonstrationIsAChatConversation(t *testing.T) {
	tr := expertTrajectories(t, 1)[0]
	d := rollout.NewDemonstration(&tr)
	if len(d.Messages) != 1+2*tr.NumSteps {
		t.Fatalf("%d messages for %d steps", len(d.Messages), tr.NumSteps)
	}
	if d.Messages[0] != (chat.Message{Role: chat.System, Content: tr.Instruction}) {
		t.Fatalf("first message %+v", d.Messages[0])
	}
	for i, s := range tr.Steps {
		user, assistant := d.Messages[1+2*i], d.Messages[2+2*i]
		if user != (chat.Message{Role: chat.User, Content: s.Observation}) {
			t.Fatalf("step %d: user message %+v", i, user)
		}
		// The recorder thinks aloud; the demonstration keeps only the action.
		if assistant != (chat.Message{Role: chat.Assistant, Content: "Action: " + s.ParsedAction}) || !strings.HasPrefix(s.Action, "Thought:") {
			t.Fatalf("step %d: assistant message %+v for action %q", i, assistant, s.Action)
		}
	}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `{"messages":[{"role":"system","content":"Guess the hidden number.`) {
		t.Fatalf("JSON form %s", data)
	}
}
