package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/registry"
	"github.com/agentrl/agentrl/rollout"
	"github.com/agentrl/agentrl/rollout/rollouttest"
)

// runApp runs the command line with args and returns what it printed.
func runApp(t *testing.T, app *cli.App, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	app.Writer = &out
	app.ErrWriter = io.Discard
	err := app.RunContext(context.Background(), append([]string{"agentrl"}, args...))
	return out.String(), err
}

// readTrajectories reads the trajectory file at path.
func readTrajectories(t *testing.T, path string) []rollout.Trajectory {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	trajs, err := rollout.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return trajs
}

// someEnv is a built-in environment with an expert, for tests that need
// one.
func someEnv(t *testing.T) string {
	t.Helper()
	for _, name := range registry.Names() {
		f, _ := registry.Lookup(name)
		if _, ok := f().(envs.Expert); ok {
			return name
		}
	}
	t.Skip("no built-in environment with an expert")
	return ""
}

func TestPlayInTheTerminal(t *testing.T) {
	g := rollouttest.New()
	g.Reset(envs.Train, 42)
	target := g.Target()
	low := "1"
	if target == 1 {
		low = "2" // "2" picks guess[2], which is too high
	}
	in := fmt.Sprintf("\n%s\nguess[%d]\n", low, target)
	var out bytes.Buffer
	if err := play(strings.NewReader(in), &out, rollouttest.New(), envs.Train, 42); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"== guess, train split, seed 42: up to 8 steps ==",
		"The hidden number is between 1 and 16.",
		"Available actions (type one, or its number):\n  1. guess[1]\n",
		"--- step 2 ---",
		"reward 1, done true",
		"Episode over: return 1, score 1, success true",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := play(strings.NewReader("dance"), &out, rollouttest.New(), envs.Train, 42); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "(invalid action)") || !strings.HasSuffix(out.String(), "(end of input)\n") {
		t.Fatalf("invalid action then end of input:\n%s", out.String())
	}
}

func TestEnvsFlagsAreValidated(t *testing.T) {
	name := someEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"envs", "eval"}, "name an environment (built in: "},
		{[]string{"envs", "eval", "nosuchenv"}, `unknown environment "nosuchenv"`},
		{[]string{"envs", "eval", name, "other"}, "one environment at a time"},
		{[]string{"envs", "eval", name, "--split", "dev"}, `--split: unknown split "dev"`},
		{[]string{"envs", "eval", name, "--episodes", "0"}, "--episodes 0 must be > 0"},
		{[]string{"envs", "eval", name, "--parallel=-1"}, "--parallel -1 must be > 0"},
		{[]string{"envs", "eval", name, "--policy", "oracle"}, `--policy: unknown policy "oracle" (want expert, random or model)`},
		{[]string{"envs", "eval", name, "--protocol", "webshop"}, "--protocol and --spec go with --remote"},
		{[]string{"envs", "eval", name, "--remote", "http://127.0.0.1:1", "--protocol", "gopher"}, `--protocol: unknown protocol "gopher"`},
		{[]string{"envs", "eval", name, "--remote", "localhost:80"}, "not an http(s) URL"},
		{[]string{"envs", "eval", name, "--bogus"}, "flag provided but not defined: --bogus"},
		{[]string{"envs", "eval", name, "--episodes"}, "flag needs an argument: --episodes"},
		{[]string{"envs", "eval", name, "--episodes", "many"}, `invalid value "many" for flag --episodes`},
		{[]string{"envs", "eval", name, "--trials", "0"}, "--trials 0 must be >= 1"},
		{[]string{"envs", "eval", name, "--trials", "2"}, "the expert plays every attempt at a task alike"},
		{[]string{"envs", "demos", name}, "--out: name the file"},
		{[]string{"envs", "serve", name, "--max-instances", "0"}, "--max-instances 0 must be > 0"},
		{[]string{"envs", "play", name, "--split", "validation"}, `unknown split "validation"`},
	} {
		_, err := runApp(t, newApp(), tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestEvalPrintsJSONAndWritesTrajectories(t *testing.T) {
	name := someEnv(t)
	path := filepath.Join(t.TempDir(), "traj.jsonl")
	out, err := runApp(t, newApp(), "envs", "eval", name, "--episodes", "6", "--parallel", "3", "--seed0", "10", "--max-steps", "30", "--json", "--out", path)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Env      string
		Split    string
		Policy   string
		Seed0    int64
		MaxSteps int `json:"max_steps"`
		Summary  rollout.Summary
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if res.Env != name || res.Split != "test" || res.Policy != "expert" || res.Seed0 != 10 || res.MaxSteps != 30 || res.Summary.Episodes != 6 || res.Summary.Errors != 0 {
		t.Fatalf("results %+v", res)
	}
	trajs := readTrajectories(t, path)
	if len(trajs) != 6 {
		t.Fatalf("%d trajectories written", len(trajs))
	}
	if got := rollout.Summarize(trajs); got != res.Summary {
		t.Fatalf("summary of the file %+v differs from the printed one %+v", got, res.Summary)
	}

	text, err := runApp(t, newApp(), "envs", "eval", name, "--episodes", "2", "--policy", "random")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{name + ", test split, seeds 0-1, random policy", "success rate", "mean steps", "invalid actions"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
}

// TestEvalTrialsReportPassHatK plays each task several times and reports
// pass^k and pass@k from the attempts, which the trajectory file holds as
// groups.
func TestEvalTrialsReportPassHatK(t *testing.T) {
	name := someEnv(t)
	path := filepath.Join(t.TempDir(), "traj.jsonl")
	out, err := runApp(t, newApp(), "envs", "eval", name, "--policy", "random", "--episodes", "4", "--trials", "3",
		"--parallel", "4", "--seed0", "5", "--max-steps", "5", "--json", "--out", path)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Trials   int
		PassHatK []float64 `json:"pass_hat_k"`
		PassAtK  []float64 `json:"pass_at_k"`
		Summary  rollout.Summary
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if res.Trials != 3 || len(res.PassHatK) != 3 || len(res.PassAtK) != 3 || res.Summary.Episodes != 12 || res.Summary.Errors != 0 {
		t.Fatalf("results %+v", res)
	}
	if math.Abs(res.PassHatK[0]-res.Summary.SuccessRate) > 1e-12 {
		t.Errorf("pass^1 %v is not the success rate %v", res.PassHatK[0], res.Summary.SuccessRate)
	}
	if math.Abs(res.PassAtK[0]-res.PassHatK[0]) > 1e-12 {
		t.Errorf("pass@1 %v, pass^1 %v", res.PassAtK[0], res.PassHatK[0])
	}
	for k := 1; k < 3; k++ {
		if res.PassHatK[k] > res.PassHatK[k-1] || res.PassAtK[k] < res.PassAtK[k-1] {
			t.Errorf("pass^k rises or pass@k falls with k: %v, %v", res.PassHatK, res.PassAtK)
		}
	}
	trajs := readTrajectories(t, path)
	samples := map[int64][]int{}
	for _, tr := range trajs {
		samples[tr.Seed] = append(samples[tr.Seed], tr.Sample)
	}
	for seed := int64(5); seed < 9; seed++ {
		got := samples[seed]
		slices.Sort(got)
		if !slices.Equal(got, []int{0, 1, 2}) {
			t.Errorf("task %d was attempted as samples %v, want 0, 1, 2", seed, got)
		}
	}
	if len(samples) != 4 {
		t.Errorf("%d tasks played, want 4", len(samples))
	}
	text, err := runApp(t, newApp(), "envs", "eval", name, "--policy", "random", "--episodes", "2", "--trials", "2", "--max-steps", "3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"seeds 0-1, random policy", "episodes         4 ", "pass@k           k=1 ", "(a success among k attempts)\npass^k           k=1 ", "k=2 ", "(2 attempts at each task)"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
}

func TestDemosAreChatConversations(t *testing.T) {
	name := someEnv(t)
	path := filepath.Join(t.TempDir(), "demos.jsonl")
	out, err := runApp(t, newApp(), "envs", "demos", name, "--episodes", "5", "--out", path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !strings.HasPrefix(out, fmt.Sprintf("wrote %d %s demonstrations (train split, seeds 0-4)", len(lines), name)) {
		t.Fatalf("report %q for %d lines", out, len(lines))
	}
	for i, line := range lines {
		var d rollout.Demonstration
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if len(d.Messages) < 3 || d.Messages[0].Role != chat.System {
			t.Fatalf("line %d: %d messages, first %q", i+1, len(d.Messages), d.Messages[0].Role)
		}
		for j, m := range d.Messages[1:] {
			want := chat.User
			if j%2 == 1 {
				want = chat.Assistant
				if !strings.HasPrefix(m.Content, "Action: ") {
					t.Fatalf("line %d: assistant turn %q", i+1, m.Content)
				}
			}
			if m.Role != want {
				t.Fatalf("line %d: message %d has role %q, want %q", i+1, j+1, m.Role, want)
			}
		}
	}
}

func TestServeThenEvalRemotely(t *testing.T) {
	name := someEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logR, logW := io.Pipe()
	app := newApp()
	app.Writer, app.ErrWriter = io.Discard, logW
	served := make(chan error, 1)
	go func() {
		served <- app.RunContext(ctx, []string{"agentrl", "envs", "serve", name, "--addr", "127.0.0.1:0"})
		logW.Close()
	}()
	line, err := bufio.NewReader(logR).ReadString('\n')
	if err != nil {
		t.Fatalf("no serving message: %v (%v)", err, <-served)
	}
	go io.Copy(io.Discard, logR)
	_, rest, ok := strings.Cut(line, " on ")
	url, _, _ := strings.Cut(rest, " ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("serving message %q", line)
	}

	out, err := runApp(t, newApp(), "envs", "eval", name, "--remote", url, "--policy", "random", "--episodes", "4", "--parallel", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Summary rollout.Summary }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Summary.Episodes != 4 || res.Summary.Errors != 0 {
		t.Fatalf("remote summary %+v", res.Summary)
	}
	// Remote random episodes equal local ones with the same seeds.
	local, err := runApp(t, newApp(), "envs", "eval", name, "--policy", "random", "--episodes", "4", "--parallel", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var localRes struct{ Summary rollout.Summary }
	json.Unmarshal([]byte(local), &localRes)
	if localRes.Summary != res.Summary {
		t.Fatalf("remote %+v differs from local %+v", res.Summary, localRes.Summary)
	}
	if _, err := runApp(t, newApp(), "envs", "eval", name, "--remote", url, "--episodes", "1"); err == nil || !strings.Contains(err.Error(), "has no expert here") {
		t.Fatalf("expert over --remote: %v", err)
	}

	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve after interrupt: %v", err)
	}
}

func TestBenchEnvsReportsThroughput(t *testing.T) {
	name := someEnv(t)
	out, err := runApp(t, newApp(), "bench", "envs", "--env", name, "--parallel", "4", "--steps", "400", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Parallel int
		Envs     []envBench
		Total    map[string]float64
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if res.Parallel != 4 || len(res.Envs) != 1 {
		t.Fatalf("results %+v", res)
	}
	e := res.Envs[0]
	if e.Env != name || e.RunnerSteps < 400 || e.RawSteps < 400 || e.RunnerStepsPerSec <= 0 || e.RawStepsPerSec <= 0 {
		t.Fatalf("measurements %+v", e)
	}
	if res.Total["runner_steps_per_sec"] <= 0 || res.Total["raw_steps_per_sec"] <= 0 {
		t.Fatalf("totals %+v", res.Total)
	}
	table, err := runApp(t, newApp(), "bench", "envs", "--env", name, "--parallel", "4", "--steps", "400")
	if err != nil || !strings.Contains(table, name) || !strings.Contains(table, "total") {
		t.Fatalf("table output: %v\n%s", err, table)
	}
}

// TestOutputIsRenamedIntoPlace: an output file is written as NAME.part;
// a command that fails leaves NAME as it was and says where its output
// went, one that succeeds replaces NAME.
func TestOutputIsRenamedIntoPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demos.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := createPart(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(out, "half")
	err = out.done(context.Canceled)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), path+".part") {
		t.Fatalf("an interrupted write: %v", err)
	}
	if old, _ := os.ReadFile(path); string(old) != "old\n" {
		t.Fatalf("the old file became %q", old)
	}
	if part, _ := os.ReadFile(path + ".part"); string(part) != "half\n" {
		t.Fatalf("the output so far is %q", part)
	}
	if out, err = createPart(path); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(out, "new")
	if err := out.done(nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new\n" {
		t.Fatalf("the finished file is %q", got)
	}
	if _, err := os.Stat(path + ".part"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the part file outlived the rename: %v", err)
	}
}
