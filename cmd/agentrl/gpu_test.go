package main

// Checks of the GPU tooling that need no GPU: how agentrl loads backend
// libraries (one built here with CMake, and libraries that cannot load),
// the CUDA build's failure without nvcc, the GPU check's dry run and its
// comparisons, and the macOS build graph. docs/gpu.md describes the tooling.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runMainEnv makes the test binary behave as agentrl: the backend loader
// runs once per process, so these tests start agentrl as a new process.
const runMainEnv = "AGENTRL_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// repoRoot is the repository root: tests run in cmd/agentrl.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// agentrlProcess runs agentrl in a new process with extra environment
// variables and returns its stdout and stderr.
func agentrlProcess(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

// agentrlScript writes an executable that runs agentrl, for scripts that
// take the binary's path.
func agentrlScript(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agentrl")
	script := "#!/bin/sh\n" + runMainEnv + "=1 exec '" + exe + "' \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

type versionReport struct {
	SystemInfo string `json:"system_info"`
	Devices    []struct {
		Name, Type, Backend string
	} `json:"devices"`
}

func versionWithLibDir(t *testing.T, dir string, extraArgs ...string) (versionReport, string) {
	t.Helper()
	stdout, stderr, err := agentrlProcess(t, []string{libDirEnv + "=" + dir}, append(extraArgs, "version", "--json")...)
	if err != nil {
		t.Fatalf("agentrl version with %s=%s: %v\n%s", libDirEnv, dir, err, stderr)
	}
	var v versionReport
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("version --json: %v\n%s", err, stdout)
	}
	return v, stderr
}

// A library that cannot be used as a backend is skipped: agentrl keeps
// running on the CPU.
func TestBackendLibrariesThatCannotLoadAreSkipped(t *testing.T) {
	cc, ccErr := exec.LookPath("cc")
	for _, c := range []struct {
		name, source string // source: C code of the library, or "" for a file that is not a library
	}{
		{"not a shared library", ""},
		{"no ggml_backend_init", "int agentrl_test_symbol = 1;\n"},
		{"ggml_backend_init returns NULL", "void * ggml_backend_init(void) { return 0; }\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			lib := filepath.Join(dir, "libggml-cuda.so")
			if c.source == "" {
				if err := os.WriteFile(lib, []byte("not an ELF file\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				if ccErr != nil {
					t.Skip("no C compiler (cc) to build the library")
				}
				src := filepath.Join(dir, "lib.c")
				if err := os.WriteFile(src, []byte(c.source), 0o644); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
					t.Fatalf("cc: %v\n%s", err, out)
				}
			}
			v, _ := versionWithLibDir(t, dir)
			if len(v.Devices) != 1 || v.Devices[0].Type != "cpu" {
				t.Fatalf("devices %+v, want the CPU alone", v.Devices)
			}
		})
	}
}

// A backend library built by scripts/build-ggml-backend.sh, as `make cuda`
// builds the CUDA one, loads into agentrl: the CPU backend stands in for
// CUDA, which needs nvcc. This checks the design docs/gpu.md explains: the
// module links its own shared ggml-base beside it (run path $ORIGIN) while
// agentrl has ggml linked in, and both work in one process.
func TestLoadsABackendLibraryBuiltWithCMake(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ggml with CMake (a minute or more)")
	}
	if _, err := exec.LookPath("cmake"); err != nil {
		t.Skip("cmake not installed")
	}
	root := repoRoot(t)
	tmp := t.TempDir()
	lib := filepath.Join(tmp, "lib")
	build := exec.Command(filepath.Join(root, "scripts", "build-ggml-backend.sh"), "--backend", "cpu",
		"--build-dir", filepath.Join(tmp, "build"), "--lib-dir", lib)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build-ggml-backend.sh --backend cpu: %v\n%s", err, out)
	}
	for _, name := range []string{"libggml-cpu.so", "libggml-base.so.0"} {
		if _, err := os.Stat(filepath.Join(lib, name)); err != nil {
			t.Fatalf("not installed: %v", err)
		}
	}

	v, stderr := versionWithLibDir(t, lib, "--verbose")
	if len(v.Devices) != 2 || v.Devices[1].Backend != "CPU" {
		t.Fatalf("devices %+v, want the built-in CPU and the loaded one", v.Devices)
	}
	if strings.Count(v.SystemInfo, "CPU :") != 2 {
		t.Errorf("system info %q should list the features of both CPU backends", v.SystemInfo)
	}
	if !strings.Contains(stderr, "loaded CPU backend from "+filepath.Join(lib, "libggml-cpu.so")) {
		t.Errorf("no load message in the log:\n%s", stderr)
	}

	// The loaded CPU backend reports a score, so ggml ranks it ahead of the
	// built-in one and llama.cpp computes with it: its tensors cross from
	// one ggml-base to the other. Built without -march, it sums in another
	// order, so the log-probabilities agree closely but not bit for bit.
	model := tinyModel(t)
	score := func(env []string) (tokens []int32, logProbs []float32) {
		out, errOut, err := agentrlProcess(t, env, "score", "--model", model, "--prompt", "Is it a cat?", "--continuation", " No it is a dog.", "--json")
		if err != nil {
			t.Fatalf("score: %v\n%s", err, errOut)
		}
		var r struct {
			Scores []struct {
				Tokens   []int32   `json:"tokens"`
				LogProbs []float32 `json:"logprobs"`
			} `json:"scores"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("score --json: %v\n%s", err, out)
		}
		for _, s := range r.Scores {
			tokens, logProbs = append(tokens, s.Tokens...), append(logProbs, s.LogProbs...)
		}
		return tokens, logProbs
	}
	wantTokens, want := score([]string{libDirEnv + "=" + tmp})
	gotTokens, got := score([]string{libDirEnv + "=" + lib})
	if !slices.Equal(gotTokens, wantTokens) || len(got) != len(want) || len(got) == 0 {
		t.Fatalf("with the loaded backend: tokens %v, want %v", gotTokens, wantTokens)
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-3 {
			t.Errorf("token %d: log-probability %g with the loaded backend, %g without", i, got[i], want[i])
		}
	}
}

func TestCUDABuildWithoutNvccFailsFast(t *testing.T) {
	root := repoRoot(t)
	run := func(t *testing.T, cmd *exec.Cmd) string {
		t.Helper()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("want a failing exit status, got %v\n%s", err, out)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("took %v to fail", d)
		}
		return string(out)
	}

	t.Run("make cuda with CUDACXX set", func(t *testing.T) {
		cmd := exec.Command("make", "cuda")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CUDACXX=/nonexistent/nvcc")
		out := run(t, cmd)
		if want := "nvcc (the CUDA compiler) not found at CUDACXX=/nonexistent/nvcc"; !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	})

	t.Run("no nvcc on PATH", func(t *testing.T) {
		if _, err := os.Stat("/usr/local/cuda/bin/nvcc"); err == nil {
			t.Skip("the CUDA toolkit is installed in /usr/local/cuda")
		}
		// A PATH with what the script runs before it looks for nvcc.
		bin := t.TempDir()
		for _, tool := range []string{"dirname", "nproc"} {
			path, err := exec.LookPath(tool)
			if err != nil {
				t.Skipf("%s not found", tool)
			}
			if err := os.Symlink(path, filepath.Join(bin, tool)); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("/bin/bash", filepath.Join(root, "scripts", "build-ggml-backend.sh"))
		cmd.Dir = root
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "CUDACXX=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "PATH="+bin)
		out := run(t, cmd)
		if want := "nvcc (the CUDA compiler) not found: install the CUDA toolkit"; !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	})
}

func needPython(t *testing.T) string {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	return python
}

// The dry run of the GPU check runs every step that needs no GPU, on the
// CPU, and says which steps it skipped.
func TestGPUBenchDryRun(t *testing.T) {
	needPython(t)
	root := repoRoot(t)
	tmp := t.TempDir()
	shaped := filepath.Join(tmp, "shapedmodel")
	build := exec.Command("go", "build", "-o", shaped, "./scripts/shapedmodel")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build shapedmodel: %v\n%s", err, out)
	}

	out := filepath.Join(tmp, "out")
	work := filepath.Join(tmp, "work")
	cmd := exec.Command(filepath.Join(root, "scripts", "gpu-bench.sh"), "--dry-run",
		"--bin", agentrlScript(t), "--shapedmodel", shaped, "--work", work)
	cmd.Env = append(os.Environ(), "OUT="+out)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("gpu-bench.sh --dry-run: %v\n%s", err, stdout)
	}
	text := string(stdout)
	for _, want := range []string{
		"dry run, no NVIDIA GPU: CPU steps only",
		"no NVIDIA GPU: skipped the check that agentrl lists a CUDA device",
		"CPU log-probabilities of small (F32): ",
		"no NVIDIA GPU: skipped GPU log-probabilities of 0.5B shape (BF16)",
		"CPU, dry run, 16 prompt + 8 generated tokens per sequence (agentrl-qwen2.5-0.5b-shape):",
		"training FLOPs per token: ",
		"small (F32), CPU:",
		"no NVIDIA GPU: skipped GRPO on the GPU",
		"gpu-bench: all checks that could run passed",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", text)
	}
	if saved, err := os.ReadFile(filepath.Join(out, "gpu-bench.txt")); err != nil || string(saved) != text {
		t.Errorf("$OUT/gpu-bench.txt should hold the output (%v)", err)
	}

	var infer struct {
		Models []struct {
			Results []struct{ Parallel int } `json:"results"`
		} `json:"models"`
	}
	b, err := os.ReadFile(filepath.Join(out, "gpu-bench", "infer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &infer); err != nil {
		t.Fatal(err)
	}
	if len(infer.Models) != 2 || len(infer.Models[1].Results) != 2 || infer.Models[1].Results[1].Parallel != 4 {
		t.Errorf("infer.json: %s", b)
	}
	var shape struct {
		Layers    int `json:"layers"`
		VocabSize int `json:"vocab_size"`
	}
	if b, err = os.ReadFile(filepath.Join(out, "gpu-bench", "shape.json")); err != nil || json.Unmarshal(b, &shape) != nil || shape.Layers != 2 || shape.VocabSize != 8192 {
		t.Errorf("shape.json (%v): %s", err, b)
	}
}

// gpuBenchHelper runs scripts/gpu_bench.py and returns its output and exit
// status.
func gpuBenchHelper(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(needPython(t), append([]string{filepath.Join(repoRoot(t), "scripts", "gpu_bench.py")}, args...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("gpu_bench.py %v: %v", args, err)
	return "", 0
}

func writeTestJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestGPUBenchParity(t *testing.T) {
	dir := t.TempDir()
	type score struct {
		Tokens   []int32   `json:"tokens"`
		LogProbs []float32 `json:"logprobs"`
	}
	scores := func(lp ...float32) map[string]any {
		return map[string]any{"scores": []score{{Tokens: []int32{5, 6}, LogProbs: lp[:2]}, {Tokens: []int32{7}, LogProbs: lp[2:]}}}
	}
	ref := writeTestJSON(t, dir, "cpu.json", scores(-1, -2, -3))
	for _, c := range []struct {
		name   string
		other  any
		status int
		want   string
	}{
		{"identical", scores(-1, -2, -3), 0, "2 continuations, 3 tokens, max |diff| 0, mean |diff| 0 of log-probabilities: ok"},
		{"within tolerance", scores(-1.005, -2, -3), 0, "max |diff| 0.005"},
		{"beyond tolerance", scores(-1, -2.25, -3), 1, "max |diff| 0.25, mean |diff| 0.0833 of log-probabilities: FAIL (tolerance 0.01)"},
		{"other tokens", map[string]any{"scores": []score{{Tokens: []int32{5, 9}, LogProbs: []float32{-1, -2}}, {Tokens: []int32{7}, LogProbs: []float32{-3}}}}, 1, "continuation 0 tokenised differently"},
		{"fewer continuations", map[string]any{"scores": []score{{Tokens: []int32{5, 6}, LogProbs: []float32{-1, -2}}}}, 1, "2 continuations against 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, status := gpuBenchHelper(t, "parity", "--label", "test", ref, writeTestJSON(t, dir, "gpu.json", c.other))
			if status != c.status || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, output %q; want exit %d and %q", status, out, c.status, c.want)
			}
		})
	}
}

func TestGPUBenchSummary(t *testing.T) {
	dir := t.TempDir()
	// Qwen2.5-0.5B without its attention biases, as shapedmodel reports it.
	shape := writeTestJSON(t, dir, "shape.json", map[string]any{
		"parameters": 494005120, "vocab_size": 151936, "layers": 24, "embedding_length": 896,
		"feed_forward_length": 4864, "head_count": 14, "head_count_kv": 2, "context_length": 4096,
		"rope_freq_base": 1e6, "rms_norm_epsilon": 1e-6,
	})
	torch := writeTestJSON(t, dir, "torch.json", map[string]any{"tokens_per_second": 50000.0})
	infer := writeTestJSON(t, dir, "infer.json", map[string]any{"models": []any{map[string]any{
		"model":   map[string]any{"path": "shape.gguf"},
		"results": []any{map[string]any{"parallel": 1, "engine_gen_tok_s": 300.0}, map[string]any{"parallel": 32, "engine_gen_tok_s": 6000.0}},
	}}})
	generate := writeTestJSON(t, dir, "generate.json", map[string]any{"gen_tok_s": 1000.0})

	for _, c := range []struct {
		name   string
		ours   float64
		status int
		want   []string
	}{
		{"targets met", 100000, 0, []string{
			// 4 x 493,961,216 frozen weights + 6 x 4,399,104 LoRA weights
			// + 6 x 1024 x 896 x 24 for attention.
			"training FLOPs per token: 2.13e+09",
			"agentrl            100000 tokens/s  MFU  27.0% of 790 TFLOP/s",
			"PyTorch + peft      50000 tokens/s  MFU  13.5% of 790 TFLOP/s",
			"training ratio agentrl / PyTorch + peft: 2.00x (meets the 1.0x target; goal 2x)",
			"inference at 32 sequences: agentrl 6000 tok/s, transformers generate 1000 tok/s: 6.00x (meets the 5x target)",
		}},
		{"training below PyTorch", 40000, 1, []string{"0.80x (BELOW the 1.0x target; goal 2x)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ours := writeTestJSON(t, dir, "ours.json", map[string]any{"tokens_per_second": c.ours})
			out, status := gpuBenchHelper(t, "summary", "--shape", shape, "--ours-train", ours, "--torch-train", torch,
				"--ours-infer", infer, "--torch-generate", generate)
			if status != c.status {
				t.Errorf("exit %d, want %d", status, c.status)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestGPUBenchReadsTheTrainingBenchmark(t *testing.T) {
	dir := t.TempDir()
	report := func(backend string) string {
		return writeTestJSON(t, dir, "train.json", map[string]any{"results": []any{map[string]any{
			"model": "shape.gguf",
			"ours":  map[string]any{"tokens_per_second": 1234.5, "backend": backend, "batch": 8, "seq_len": 1024, "timed_steps": 10},
		}}})
	}
	out, status := gpuBenchHelper(t, "ours-train", "--want-gpu", report("CUDA0"), "--out", filepath.Join(dir, "ours.json"))
	if status != 0 || !strings.Contains(out, "agentrl LoRA training: 1234 tokens/s on CUDA0 (batch 8 x 1024 tokens, 10 timed steps)") {
		t.Errorf("exit %d, output %q", status, out)
	}
	var saved struct {
		TokensPerSecond float64 `json:"tokens_per_second"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ours.json")); err != nil || json.Unmarshal(b, &saved) != nil || saved.TokensPerSecond != 1234.5 {
		t.Errorf("ours.json: %v %+v", err, saved)
	}
	if out, status := gpuBenchHelper(t, "ours-train", "--want-gpu", report("CPU"), "--out", filepath.Join(dir, "ours.json")); status != 1 || !strings.Contains(out, "ran on CPU, not on the GPU") {
		t.Errorf("training on the CPU passed the GPU check: exit %d, %q", status, out)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("panic: something\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, status := gpuBenchHelper(t, "ours-train", bad, "--out", filepath.Join(dir, "x.json")); status != 1 || !strings.Contains(out, "no results[0].ours.tokens_per_second") {
		t.Errorf("unreadable output: exit %d, %q", status, out)
	}
}

// On macOS/arm64 the cgo build compiles ggml's Metal and BLAS (Accelerate)
// backends into agentrl. CI cannot compile cgo for darwin (no Apple SDK),
// so `make check-darwin` vets the pure-Go packages for darwin/arm64 and
// checks the package graph there.
func TestDarwinArm64Build(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command("make", "-s", "check-darwin")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make check-darwin: %v\n%s", err, out)
	}
	deps := func(goos, goarch string) string {
		cmd := exec.Command("go", "list", "-deps", "./cmd/agentrl")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list for %s/%s: %v", goos, goarch, err)
		}
		return string(out)
	}
	const metal, blas = "ml/backend/ggml/ggml/src/ggml-metal\n", "ml/backend/ggml/ggml/src/ggml-blas\n"
	if d := deps("darwin", "arm64"); !strings.Contains(d, metal) || !strings.Contains(d, blas) {
		t.Errorf("darwin/arm64 build lacks ggml-metal or ggml-blas")
	}
	if d := deps("linux", "amd64"); strings.Contains(d, metal) {
		t.Errorf("linux/amd64 build includes ggml-metal")
	}
}

func TestGPUScriptsPassShellcheck(t *testing.T) {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck not installed")
	}
	root := repoRoot(t)
	var scripts []string
	for _, s := range []string{"build-ggml-backend.sh", "gpu-bench.sh"} {
		scripts = append(scripts, filepath.Join(root, "scripts", s))
	}
	if out, err := exec.Command(shellcheck, scripts...).CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}
