package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/llm/gguf"
	"github.com/agentrl/agentrl/llm/initmodel"
	"github.com/agentrl/agentrl/llm/initmodel/initmodeltest"
)

// smallReferenceRun are settings that keep a run on the tiny model short;
// the script is named from this package's folder.
var smallReferenceRun = []string{"--script", filepath.Join("..", "..", "bench", "peers", "hf_reference.py"), "--threads", "1,2", "--batch", "2", "--seq-len", "32", "--steps", "2",
	"--sequences", "1,3", "--gen-tokens", "4"}

// Without the reference's interpreter the command still measures agentrl's
// side, says the reference was skipped and how to install it, and exits 0.
func TestBenchReferenceWithoutPython(t *testing.T) {
	model := tinyModel(t)
	app := newApp()
	var stdout, stderr bytes.Buffer
	app.Writer, app.ErrWriter = &stdout, &stderr
	args := append([]string{"agentrl", "bench", "reference", "--model", model, "--python", filepath.Join(t.TempDir(), "no-python"), "--json"}, smallReferenceRun...)
	if err := app.RunContext(context.Background(), args); err != nil {
		t.Fatalf("bench reference: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "skipped") || !strings.Contains(stderr.String(), "scripts/install-peers.sh") {
		t.Errorf("stderr should say the reference was skipped and how to install it:\n%s", stderr.String())
	}
	var rep referenceReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if !strings.Contains(rep.Reference.Skipped, "no-python") {
		t.Errorf("reference.skipped = %q, want the missing interpreter named", rep.Reference.Skipped)
	}
	if rep.Texts != len(referenceChats) || rep.TextTokens <= 2*rep.Texts {
		t.Errorf("texts %d with %d tokens", rep.Texts, rep.TextTokens)
	}
	// Only llama.cpp and the trainer ran; on an F32 model they agree to
	// about 1e-3 (llama.cpp's F16 KV cache), far below what a wrong
	// forward pass gives (1e-2 and more, see bench/peers/README.md).
	if len(rep.LogProbs.Pairs) != 1 {
		t.Fatalf("want one compared pair, got %+v", rep.LogProbs.Pairs)
	}
	d := rep.LogProbs.Pairs[0]
	if d.A != implLlamaCpp || d.B != implTrainer || d.Positions != rep.TextTokens-rep.Texts || !(d.MaxAbs < 5e-3) || !(d.MeanAbs <= d.MaxAbs) {
		t.Errorf("llama.cpp vs trainer: %+v", d)
	}
	if len(rep.LoRA) != 2 || rep.LoRA[0].Threads != 1 || rep.LoRA[1].Threads != 2 {
		t.Fatalf("want LoRA rows at 1 and 2 threads, got %+v", rep.LoRA)
	}
	for _, r := range rep.LoRA {
		if r.Peft != nil || len(r.Ours.Losses) != 2 || !(r.Ours.TokensPerSecond > 0) || !(r.Ours.FinalLoss < r.Ours.Losses[0]) {
			t.Errorf("LoRA row: peft %v, losses %v -> %v, %.0f tok/s", r.Peft, r.Ours.Losses, r.Ours.FinalLoss, r.Ours.TokensPerSecond)
		}
	}
	if len(rep.Generate) != 4 {
		t.Fatalf("want 2 threads x 2 sequence counts of generation, got %d", len(rep.Generate))
	}
	for _, g := range rep.Generate {
		if !(g.OursTPS > 0) || g.TheirTPS != 0 || g.GreedyAgreement != nil {
			t.Errorf("generation row %+v", g)
		}
	}

	// The same without --json: tables, the skip said on stdout too.
	table, err := runApp(t, newApp(), append([]string{"bench", "reference", "--model", model, "--python", "no-such-python-here"}, smallReferenceRun...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"reference skipped", "llama.cpp vs trainer", "LoRA training", "greedy generation"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// On a quantised model the trainer also runs on the weights dequantised
// to F32, compared with both: the gap the 8-bit activations of quantised
// products make.
func TestBenchReferenceQuantizedModelAddsF32Trainer(t *testing.T) {
	model := initmodeltest.Write(t, initmodel.Config{Preset: "tiny", Seed: 3, Type: gguf.TensorQ8_0})
	out, err := runApp(t, newApp(), "bench", "reference", "--model", model, "--python", "no-such-python-here", "--json",
		"--threads", "2", "--batch", "2", "--seq-len", "32", "--steps", "2", "--sequences", "1", "--gen-tokens", "4")
	if err != nil {
		t.Fatal(err)
	}
	var rep referenceReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	diffs := map[string]logProbDiff{}
	for _, d := range rep.LogProbs.Pairs {
		diffs[d.A+" | "+d.B] = d
	}
	quantised, dequantised := diffs[implLlamaCpp+" | "+implTrainer], diffs[implTrainer+" | "+implTrainerF32]
	if len(diffs) != 3 || !(quantised.MaxAbs < 5e-2) || !(dequantised.MeanAbs > 0) {
		t.Fatalf("want llama.cpp, trainer and trainer on F32 weights compared pairwise, got %+v", rep.LogProbs.Pairs)
	}
}

// A reference that fails stops the command with its stderr in the error.
// The "interpreter" here is the shell, running a script that fails as
// hf_reference.py does on a bad model.
func TestBenchReferencePeerFailureShowsStderr(t *testing.T) {
	script := filepath.Join(t.TempDir(), "failing.sh")
	if err := os.WriteFile(script, []byte("echo 'hf_reference: unsupported architecture' >&2\nexit 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runApp(t, newApp(), append([]string{"bench", "reference", "--model", tinyModel(t), "--python", "sh"}, append(smallReferenceRun, "--script", script)...)...)
	if err == nil || !strings.Contains(err.Error(), "unsupported architecture") {
		t.Fatalf("want the script's stderr in the error, got %v", err)
	}
}

func TestBenchReferenceBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", filepath.Join(t.TempDir(), "missing.gguf")}, "missing.gguf"},
		{[]string{"--model", tinyModel(t), "--threads", "0"}, "--threads"},
		{[]string{"--model", tinyModel(t), "--steps", "1", "--warmup", "1"}, "--steps"},
		{[]string{"--model", tinyModel(t), "--lr", "0"}, "--lr"},
	} {
		_, err := runApp(t, newApp(), append([]string{"bench", "reference"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error naming %q, got %v", tc.args, tc.want, err)
		}
	}
}

func TestParsePeerReport(t *testing.T) {
	job := peerJob{
		LogProbs: &peerLogProbsJob{Sequences: [][]int32{{1, 2, 3}}},
		Generate: &peerGenerateJob{Prompt: []int32{1}, NewTokens: 2, Sequences: []int{1, 8}},
		LoRA:     &peerLoRAJob{Steps: 2},
	}
	out := `{"model": "/m.gguf", "threads": 2, "versions": {"torch": "2.15.0"},
		"logprobs": {"logprobs": [[-1.5, -0.25]], "seconds": 0.1},
		"generate": {"prompt_tokens": 1, "new_tokens": 2, "results": [
			{"sequences": 1, "seconds": 0.5, "tokens_per_second": 4, "first_tokens": [7, 8]},
			{"sequences": 8, "seconds": 1, "tokens_per_second": 16, "first_tokens": [7, 8]}]},
		"lora": {"batch": 4, "seq_len": 256, "losses": [2.5, 2.25], "final_loss": 2.0, "tokens_per_second": 300}}`
	rep, err := parsePeerReport([]byte(out), job)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Versions["torch"] != "2.15.0" || rep.LogProbs.LogProbs[0][1] != -0.25 || rep.Generate.Results[1].TokensPerSecond != 16 ||
		rep.Generate.Results[0].FirstTokens[1] != 8 || rep.LoRA.Losses[1] != 2.25 || rep.LoRA.TokensPerSecond != 300 {
		t.Errorf("parsed %+v", rep)
	}
	// Every part the job asked for must be there.
	job.LoRA.Steps = 3
	if _, err := parsePeerReport([]byte(out), job); err == nil || !strings.Contains(err.Error(), "training step") {
		t.Errorf("a report with fewer losses than steps: %v", err)
	}
	job.LoRA.Steps = 2
	job.Generate.Sequences = []int{1, 8, 32}
	if _, err := parsePeerReport([]byte(out), job); err == nil {
		t.Error("a report missing a sequence count was accepted")
	}
	if _, err := parsePeerReport([]byte("Traceback (most recent call last):"), peerJob{}); err == nil {
		t.Error("text that is not JSON was accepted")
	}
}

func TestReferenceChats(t *testing.T) {
	if len(referenceChats) != 20 {
		t.Fatalf("%d chats, want 20", len(referenceChats))
	}
	seen := map[string]bool{}
	for i, msgs := range referenceChats {
		if len(msgs) != 3 || msgs[0].Role != chat.System || msgs[1].Role != chat.User || msgs[2].Role != chat.Assistant {
			t.Errorf("chat %d: want instruction, observation, action; got %+v", i, msgs)
		}
		for _, m := range msgs {
			if strings.TrimSpace(m.Content) == "" {
				t.Errorf("chat %d: empty %s message", i, m.Role)
			}
		}
		key := msgs[1].Content + msgs[2].Content
		if seen[key] {
			t.Errorf("chat %d repeats an earlier one", i)
		}
		seen[key] = true
	}
}

func TestTrainingBatchRepeatsTheTexts(t *testing.T) {
	texts := [][]int32{{1, 2, 3}, {4, 5}}
	got := trainingBatch(texts, 3, 3)
	want := [][]int32{{1, 2, 3, 4}, {5, 1, 2, 3}, {4, 5, 1, 2}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("row %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func TestCompareLogProbs(t *testing.T) {
	a := [][]float64{{-1, -2}, {-3}}
	b := [][]float64{{-1.5, -2}, {-2}}
	d, err := compareLogProbs("x", "y", a, b)
	if err != nil {
		t.Fatal(err)
	}
	if d.Positions != 3 || d.MaxAbs != 1 || d.MeanAbs != 0.5 || d.WorstText != 1 || d.WorstPosition != 1 {
		t.Errorf("got %+v", d)
	}
	if _, err := compareLogProbs("x", "y", a, [][]float64{{-1, -2}, {-3, -4}}); err == nil {
		t.Error("texts of different lengths were compared")
	}
}
