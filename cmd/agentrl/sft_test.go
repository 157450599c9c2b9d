package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const sftData = `{"prompt": "Task: open the door.", "completion": " Action: open door"}
{"messages": [{"role": "user", "content": "Where is the mug?"}, {"role": "assistant", "content": "On the table."}]}
{"prompt": "Task: find the key.", "completion": " Action: go to drawer 1"}
`

func TestSFTWritesAnAdapterTheEngineLoads(t *testing.T) {
	model := tinyModel(t)
	dir := t.TempDir()
	data := writeFile(t, dir, "data.jsonl", sftData)
	out := filepath.Join(dir, "adapter.gguf")
	if _, err := runApp(t, newApp(), "sft", "--model", model, "--data", data, "--out", out, "--lora-rank", "4",
		"--epochs", "2", "--batch-tokens", "64", "--lr", "1e-3", "--threads", "1"); err != nil {
		t.Fatal(err)
	}
	m, err := llm.Load(model, llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	a, err := m.LoadAdapter(out)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	f, err := os.Open(out + ".metrics.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	steps := 0
	for sc := bufio.NewScanner(f); sc.Scan(); steps++ {
		var p struct {
			Step int
			Loss float64
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil || p.Step != steps+1 || !(p.Loss > 0) {
			t.Fatalf("metrics line %d: %s (%v)", steps+1, sc.Text(), err)
		}
	}
	if steps < 2 {
		t.Fatalf("%d steps in the metrics", steps)
	}
}

func TestSFTBadInput(t *testing.T) {
	model := tinyModel(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "adapter.gguf")
	keep := writeFile(t, dir, "keep.gguf", "an earlier adapter")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"malformed line": {[]string{"--data", writeFile(t, dir, "bad.jsonl", sftData+"{\"prompt\": 3}\n")}, "bad.jsonl:4:"},
		"empty data":     {[]string{"--data", writeFile(t, dir, "empty.jsonl", "\n")}, "no examples"},
		"no data file":   {[]string{"--data", filepath.Join(dir, "none.jsonl")}, "no such file"},
		"too long":       {[]string{"--data", writeFile(t, dir, "long.jsonl", `{"prompt": "`+strings.Repeat("door ", 200)+`", "completion": "x"}`), "--ctx", "64"}, "exceed the context of 64"},
		"rank":           {[]string{"--data", writeFile(t, dir, "ok.jsonl", sftData), "--lora-rank", "0"}, "--lora-rank 0"},
		"target":         {[]string{"--data", filepath.Join(dir, "ok.jsonl"), "--lora-targets", "q,x"}, `unknown LoRA target "x"`},
		"resume":         {[]string{"--data", filepath.Join(dir, "ok.jsonl"), "--resume", dir}, "no checkpoint there"},
		"corrupt init":   {[]string{"--data", filepath.Join(dir, "ok.jsonl"), "--init-adapter", keep}, "adapter"},
		"bad model":      {[]string{"--data", filepath.Join(dir, "ok.jsonl"), "--model", keep}, "keep.gguf"},
	} {
		args := append([]string{"sft", "--model", model, "--out", out, "--threads", "1"}, tc.args...)
		_, err := runApp(t, newApp(), args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed run wrote the output")
	}
	if b, _ := os.ReadFile(keep); string(b) != "an earlier adapter" {
		t.Error("a failed run changed an input file")
	}
}

func TestPretrainBuiltinCorpus(t *testing.T) {
	model := tinyModel(t)
	out := filepath.Join(t.TempDir(), "pretrained.gguf")
	if _, err := runApp(t, newApp(), "pretrain", "--model", model, "--corpus", "builtin", "--out", out,
		"--seq-len", "64", "--batch-tokens", "256", "--max-steps", "3", "--threads", "1"); err != nil {
		t.Fatal(err)
	}
	m, err := llm.Load(out, llm.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
}

func TestBenchTrainReportsSpeedAndPeak(t *testing.T) {
	out, err := runApp(t, newApp(), "bench", "train", "--model", tinyModel(t), "--shapes", "2x32", "--steps", "2",
		"--warmup", "1", "--threads", "1", "--profile-steps", "1", "--torch-script", "", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		CPUPeak struct{ GFLOPS float64 } `json:"cpu_peak"`
		Results []struct {
			Ours struct {
				BestTokensPerSecond float64 `json:"best_tokens_per_second"`
				GFLOPS              float64 `json:"gflops"`
				Losses              []float64
				Profile             []train.OpShare
			}
			PeakShare  float64 `json:"peak_share"`
			TorchError string  `json:"pytorch_skipped"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Results) != 1 || rep.CPUPeak.GFLOPS <= 0 {
		t.Fatalf("report %+v", rep)
	}
	r := rep.Results[0]
	if r.Ours.BestTokensPerSecond <= 0 || r.Ours.GFLOPS <= 0 || len(r.Ours.Losses) != 2 || r.PeakShare <= 0 || r.PeakShare > 1 || r.TorchError != "disabled" {
		t.Errorf("result %+v", r)
	}
	// The profile: the costliest kind first (matrix products: ggml's, or
	// the CBLAS library's custom operations where one is installed), the
	// host's share last, and together the wall time of the profiled step.
	prof := r.Ours.Profile
	products := func(op string) bool {
		return strings.HasPrefix(op, "MUL_MAT") || strings.HasPrefix(op, "OUT_PROD") || strings.HasPrefix(op, "CUSTOM")
	}
	if len(prof) < 3 || prof[len(prof)-1].Op != train.OutsideGraphs || !products(prof[0].Op) {
		t.Fatalf("profile %+v", prof)
	}
	total := 0.0
	for i, op := range prof {
		total += op.Share
		if i > 0 && i < len(prof)-1 && op.Seconds > prof[i-1].Seconds {
			t.Errorf("profile not sorted at %d: %+v", i, prof)
		}
	}
	if math.Abs(total-1) > 1e-6 {
		t.Errorf("profile shares sum to %v: %+v", total, prof)
	}
}
