package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/gguf"
	"github.com/agentrl/agentrl/llm/models"
	"github.com/agentrl/agentrl/llm/train"
)

// The names of the implementations in reports. "trainer, F32 weights" is
// the trainer on the weights dequantised to F32, as transformers loads
// them: set beside "trainer" (which multiplies quantised weights as
// llama.cpp does), it shows how much of a gap the quantised products make.
const (
	implLlamaCpp     = "llama.cpp"
	implTrainer      = "trainer"
	implTrainerF32   = "trainer, F32 weights"
	implTransformers = "transformers"
)

const installPeersHint = "install it with scripts/install-peers.sh, or pass --python"

func benchReferenceCommand() *cli.Command {
	return &cli.Command{
		Name:  "reference",
		Usage: "log-probabilities, LoRA training and generation against transformers + peft on the same model",
		Description: "Runs agentrl and an independent reference (bench/peers/hf_reference.py: transformers, which\n" +
			"dequantises the GGUF to F32, and peft) on the same token ids, in one run:\n" +
			"  1. log-probabilities of 20 built-in agent chats: llama.cpp, the trainer and transformers, pairwise\n" +
			"     max and mean |difference|;\n" +
			"  2. LoRA training steps (same batch, rank, targets, initial A, AdamW settings) at each --threads:\n" +
			"     per-step losses and tokens/s of the trainer and of peft;\n" +
			"  3. greedy generation of --gen-tokens tokens for each --sequences count: tokens/s of the engine\n" +
			"     and of transformers' generate.\n" +
			"Without the reference's interpreter (scripts/install-peers.sh makes .venv-peers/) only agentrl's\n" +
			"side runs, and the report says the reference was skipped.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: modelUsage, Required: true},
			&cli.StringFlag{Name: "python", Value: filepath.Join(".venv-peers", "bin", "python"), Usage: "interpreter with torch, transformers, peft and gguf"},
			&cli.StringFlag{Name: "script", Value: filepath.Join("bench", "peers", "hf_reference.py"), Usage: "the reference script"},
			&cli.StringFlag{Name: "threads", Value: "1,2", Usage: "comma-separated CPU thread counts for training and generation"},
			&cli.IntFlag{Name: "batch", Value: 4, Usage: "training sequences per batch"},
			&cli.IntFlag{Name: "seq-len", Value: 256, Usage: "predicted tokens per training sequence"},
			&cli.IntFlag{Name: "steps", Value: 4, Usage: "training steps per side and thread count"},
			&cli.IntFlag{Name: "warmup", Value: 1, Usage: "untimed first training steps"},
			&cli.IntFlag{Name: "rank", Value: train.DefaultLoRARank, Usage: "LoRA rank (alpha = rank) on q, k, v, o, gate, up, down"},
			&cli.Float64Flag{Name: "lr", Value: 1e-3, Usage: "AdamW learning rate (constant, no clipping, no weight decay)"},
			&cli.StringFlag{Name: "sequences", Value: "1,8,32", Usage: "comma-separated numbers of sequences generated together"},
			&cli.IntFlag{Name: "gen-tokens", Value: 64, Usage: "tokens generated per sequence"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: runBenchReference,
	}
}

// referenceConfig is the parsed command line.
type referenceConfig struct {
	model, python, script string
	threads, sequences    []int
	batch, seqLen         int
	steps, warmup, rank   int
	lr                    float64
	genTokens             int
}

func parseReferenceFlags(c *cli.Context) (referenceConfig, error) {
	rc := referenceConfig{model: c.String("model"), python: c.String("python"), script: c.String("script"),
		batch: c.Int("batch"), seqLen: c.Int("seq-len"), steps: c.Int("steps"), warmup: c.Int("warmup"),
		rank: c.Int("rank"), lr: c.Float64("lr"), genTokens: c.Int("gen-tokens")}
	var err error
	if rc.threads, err = parseInts("threads", c.String("threads")); err != nil {
		return rc, err
	}
	if rc.sequences, err = parseInts("sequences", c.String("sequences")); err != nil {
		return rc, err
	}
	switch {
	case rc.batch <= 0 || rc.seqLen <= 0 || rc.rank <= 0 || rc.genTokens <= 0:
		return rc, errors.New("--batch, --seq-len, --rank and --gen-tokens must be positive")
	case rc.warmup < 0 || rc.steps <= rc.warmup:
		return rc, fmt.Errorf("--steps %d must exceed --warmup %d", rc.steps, rc.warmup)
	case !(rc.lr > 0):
		return rc, fmt.Errorf("--lr %g must be positive", rc.lr)
	}
	// The reference reads the file itself: resolve names to it here.
	if rc.model, err = models.Resolve(rc.model); err != nil {
		return rc, fmt.Errorf("--model: %w", err)
	}
	return rc, nil
}

// peerMissing says why the reference cannot run, or "" when it can.
func peerMissing(python, script string) string {
	if _, err := os.Stat(script); err != nil {
		return fmt.Sprintf("no reference script %s", script)
	}
	if _, err := exec.LookPath(python); err != nil {
		return fmt.Sprintf("no Python interpreter %s", python)
	}
	return ""
}

// referenceReport is the command's JSON output.
type referenceReport struct {
	Model            llm.Info       `json:"model"`
	SystemInfo       string         `json:"system_info"`
	LoadAverageStart string         `json:"load_average_start"`
	LoadAverageEnd   string         `json:"load_average_end"`
	Reference        referencePeer  `json:"reference"`
	Texts            int            `json:"texts"`
	TextTokens       int            `json:"text_tokens"`
	LogProbs         logProbReport  `json:"logprobs"`
	LoRA             []loraRow      `json:"lora"`
	Generate         []generateRow  `json:"generate"`
	Settings         map[string]any `json:"settings"`
}

type referencePeer struct {
	Python   string            `json:"python"`
	Script   string            `json:"script"`
	Versions map[string]string `json:"versions,omitempty"`
	// Skipped says why the reference did not run; empty when it did.
	Skipped string `json:"skipped,omitempty"`
}

type logProbReport struct {
	// MeanLogProb is each implementation's mean token log-probability over
	// all texts.
	MeanLogProb map[string]float64 `json:"mean_logprob"`
	Pairs       []logProbDiff      `json:"pairs"`
}

// logProbDiff compares two implementations' log-probabilities of the same
// tokens.
type logProbDiff struct {
	A         string  `json:"a"`
	B         string  `json:"b"`
	Positions int     `json:"positions"`
	MaxAbs    float64 `json:"max_abs_diff"`
	MeanAbs   float64 `json:"mean_abs_diff"`
	// WorstText and WorstPosition locate the largest difference (0-based;
	// the position of the predicted token in the text).
	WorstText     int `json:"worst_text"`
	WorstPosition int `json:"worst_position"`
}

type loraRow struct {
	Threads     int               `json:"threads"`
	LoadAverage string            `json:"load_average"`
	Ours        train.BenchResult `json:"ours"`
	Peft        *peerLoRA         `json:"peft,omitempty"`
	// Speedup is our mean tokens/s over the timed steps divided by peft's.
	Speedup float64 `json:"speedup,omitempty"`
}

type generateRow struct {
	Threads      int     `json:"threads"`
	Sequences    int     `json:"sequences"`
	LoadAverage  string  `json:"load_average"`
	OursSeconds  float64 `json:"ours_s"`
	OursTPS      float64 `json:"ours_tok_s"`
	TheirSeconds float64 `json:"transformers_s,omitempty"`
	TheirTPS     float64 `json:"transformers_tok_s,omitempty"`
	Speedup      float64 `json:"speedup,omitempty"`
	// GreedyAgreement is how many leading tokens of the first sequence
	// both sides generated alike (greedy decoding: they part where the
	// arithmetic first tips an argmax the other way).
	GreedyAgreement *int `json:"greedy_agreement,omitempty"`
}

// peerReport is what hf_reference.py prints.
type peerReport struct {
	Model       string            `json:"model"`
	Threads     int               `json:"threads"`
	Versions    map[string]string `json:"versions"`
	LoadSeconds float64           `json:"load_seconds"`
	VocabSize   int               `json:"vocab_size"`
	LogProbs    *struct {
		LogProbs [][]float64 `json:"logprobs"`
		Seconds  float64     `json:"seconds"`
	} `json:"logprobs"`
	Generate *struct {
		PromptTokens int `json:"prompt_tokens"`
		NewTokens    int `json:"new_tokens"`
		Results      []struct {
			Sequences       int     `json:"sequences"`
			Seconds         float64 `json:"seconds"`
			TokensPerSecond float64 `json:"tokens_per_second"`
			FirstTokens     []int32 `json:"first_tokens"`
		} `json:"results"`
	} `json:"generate"`
	LoRA *peerLoRA `json:"lora"`
}

type peerLoRA struct {
	Batch               int       `json:"batch"`
	SeqLen              int       `json:"seq_len"`
	Rank                int       `json:"rank"`
	Alpha               float64   `json:"alpha"`
	LR                  float64   `json:"lr"`
	TrainableParameters int64     `json:"trainable_parameters"`
	Losses              []float64 `json:"losses"`
	FinalLoss           float64   `json:"final_loss"`
	StepSeconds         []float64 `json:"step_seconds"`
	TimedSteps          int       `json:"timed_steps"`
	Seconds             float64   `json:"seconds"`
	TokensPerSecond     float64   `json:"tokens_per_second"`
	BestTokensPerSecond float64   `json:"best_tokens_per_second"`
}

// peerJob is the job file hf_reference.py reads; nil parts are not run.
type peerJob struct {
	LogProbs *peerLogProbsJob `json:"logprobs,omitempty"`
	Generate *peerGenerateJob `json:"generate,omitempty"`
	LoRA     *peerLoRAJob     `json:"lora,omitempty"`
}

type peerLogProbsJob struct {
	Sequences [][]int32 `json:"sequences"`
}

type peerGenerateJob struct {
	Prompt    []int32 `json:"prompt"`
	NewTokens int     `json:"new_tokens"`
	Sequences []int   `json:"sequences"`
}

type peerLoRAJob struct {
	Tokens  [][]int32 `json:"tokens"`
	Rank    int       `json:"rank"`
	Alpha   float64   `json:"alpha"`
	Targets []string  `json:"targets"`
	Steps   int       `json:"steps"`
	Warmup  int       `json:"warmup"`
	LR      float64   `json:"lr"`
	Seed    int       `json:"seed"`
	// Adapter is a llama.cpp LoRA adapter whose A matrices peft starts
	// from (the trainer's initial adapter).
	Adapter string `json:"adapter"`
}

// parsePeerReport reads hf_reference.py's output and checks that it holds
// the parts the job asked for.
func parsePeerReport(out []byte, job peerJob) (peerReport, error) {
	var rep peerReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return rep, fmt.Errorf("reference output is not its JSON report: %w", err)
	}
	if job.LogProbs != nil && (rep.LogProbs == nil || len(rep.LogProbs.LogProbs) != len(job.LogProbs.Sequences)) {
		return rep, errors.New("reference report lacks the log-probabilities of every text")
	}
	if job.Generate != nil && (rep.Generate == nil || len(rep.Generate.Results) != len(job.Generate.Sequences)) {
		return rep, errors.New("reference report lacks a generation result per sequence count")
	}
	if job.LoRA != nil && (rep.LoRA == nil || len(rep.LoRA.Losses) != job.LoRA.Steps) {
		return rep, errors.New("reference report lacks the loss of every training step")
	}
	return rep, nil
}

// runPeer runs the reference script on a job and returns its report; a
// failure carries the end of the script's stderr.
func runPeer(ctx context.Context, rc referenceConfig, threads int, job peerJob, dir string) (peerReport, error) {
	jobFile := filepath.Join(dir, fmt.Sprintf("job-threads%d.json", threads))
	if err := writeJSON(jobFile, job); err != nil {
		return peerReport{}, err
	}
	cmd := exec.CommandContext(ctx, rc.python, rc.script, "--model", rc.model, "--threads", fmt.Sprint(threads), "--job", jobFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return peerReport{}, fmt.Errorf("%s %s (threads %d): %w\n%s", rc.python, rc.script, threads, err, lastLines(stderr.String(), 20))
	}
	return parsePeerReport(stdout.Bytes(), job)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute averages ("" where
// there is none): the timings mean little without the machine's load.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// chatTokens renders each chat with the model's template and tokenises it
// as the engine tokenises prompts (BOS, special tokens parsed).
func chatTokens(m *llm.Model) ([][]int32, error) {
	out := make([][]int32, len(referenceChats))
	for i, msgs := range referenceChats {
		ids, err := m.Tokenize(m.RenderChat(msgs, false), true, true)
		if err != nil {
			return nil, fmt.Errorf("text %d: %w", i, err)
		}
		if len(ids) < 2 {
			return nil, fmt.Errorf("text %d: %d tokens, want at least 2", i, len(ids))
		}
		out[i] = ids
	}
	return out, nil
}

// trainingBatch lays the texts end to end, repeated as often as needed, and
// cuts batch rows of seqLen+1 tokens from them: real text, so that the
// losses mean something, and the same ids for both trainers.
func trainingBatch(texts [][]int32, batch, seqLen int) [][]int32 {
	var stream []int32
	for len(stream) < batch*(seqLen+1) {
		for _, t := range texts {
			stream = append(stream, t...)
		}
	}
	rows := make([][]int32, batch)
	for i := range rows {
		rows[i] = stream[i*(seqLen+1) : (i+1)*(seqLen+1)]
	}
	return rows
}

// engineLogProbs scores every token after the first of each text with
// llama.cpp.
func engineLogProbs(ctx context.Context, m *llm.Model, texts [][]int32, threads int) ([][]float64, error) {
	longest := 0
	for _, t := range texts {
		longest = max(longest, len(t))
	}
	e, err := m.NewEngine(llm.EngineOptions{Parallel: len(texts), Context: longest, Threads: threads})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	reqs := make([]llm.ScoreRequest, len(texts))
	for i, t := range texts {
		reqs[i] = llm.ScoreRequest{PromptTokens: t[:1], ContinuationTokens: t[1:]}
	}
	res, err := e.Score(ctx, reqs, llm.CallOptions{})
	if err != nil {
		return nil, fmt.Errorf("llama.cpp scores: %w", err)
	}
	out := make([][]float64, len(res))
	for i, r := range res {
		out[i] = widen(r.LogProbs)
	}
	return out, nil
}

// trainerLogProbs computes the same log-probabilities with the trainer's
// forward pass: with a fresh LoRA (B = 0, so the base model), or with
// dequantized set, as a full-parameter trainer whose weights are the
// file's dequantised to F32.
func trainerLogProbs(path string, texts [][]int32, threads int, dequantized bool) ([][]float64, error) {
	longest := 0
	seqs := make([]train.Sequence, len(texts))
	for i, t := range texts {
		seqs[i].Tokens = t
		longest = max(longest, len(t))
	}
	tr, err := train.New(path, train.Config{Threads: threads, Context: longest, Full: dequantized, Dequantize: dequantized})
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	defer tr.Close()
	lp, err := tr.LogProbs(seqs)
	if err != nil {
		return nil, fmt.Errorf("trainer log-probabilities: %w", err)
	}
	out := make([][]float64, len(lp))
	for i := range lp {
		out[i] = widen(lp[i][1:])
	}
	return out, nil
}

// quantizedMatrices reports whether the model's matrices are stored in a
// type other than F32 (blk.0.attn_q.weight decides).
func quantizedMatrices(path string) (bool, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	t, ok := f.Tensor("blk.0.attn_q.weight")
	if !ok {
		return false, fmt.Errorf("%s: no blk.0.attn_q.weight", path)
	}
	return t.Type != gguf.TensorF32, nil
}

// ourLogProbs computes the texts' log-probabilities with llama.cpp and the
// trainer, and on a quantised model also with the trainer on the weights
// dequantised to F32.
func ourLogProbs(ctx context.Context, m *llm.Model, path string, texts [][]int32, threads int) (map[string][][]float64, error) {
	out := map[string][][]float64{}
	var err error
	if out[implLlamaCpp], err = engineLogProbs(ctx, m, texts, threads); err != nil {
		return nil, err
	}
	if out[implTrainer], err = trainerLogProbs(path, texts, threads, false); err != nil {
		return nil, err
	}
	quantized, err := quantizedMatrices(path)
	if err != nil {
		return nil, err
	}
	if quantized {
		if out[implTrainerF32], err = trainerLogProbs(path, texts, threads, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// compareAll compares every pair of the implementations present.
func compareAll(logProbs map[string][][]float64) (logProbReport, error) {
	rep := logProbReport{MeanLogProb: map[string]float64{}}
	names := []string{implLlamaCpp, implTrainer, implTrainerF32, implTransformers}
	for _, name := range names {
		if lp, ok := logProbs[name]; ok {
			rep.MeanLogProb[name] = meanOf(lp)
		}
	}
	for i, a := range names {
		for _, b := range names[i+1:] {
			if logProbs[a] == nil || logProbs[b] == nil {
				continue
			}
			d, err := compareLogProbs(a, b, logProbs[a], logProbs[b])
			if err != nil {
				return rep, err
			}
			rep.Pairs = append(rep.Pairs, d)
		}
	}
	return rep, nil
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// compareLogProbs computes the differences between two implementations'
// log-probabilities of the same texts.
func compareLogProbs(nameA, nameB string, a, b [][]float64) (logProbDiff, error) {
	d := logProbDiff{A: nameA, B: nameB}
	if len(a) != len(b) {
		return d, fmt.Errorf("%s has %d texts, %s %d", nameA, len(a), nameB, len(b))
	}
	sum := 0.0
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return d, fmt.Errorf("text %d: %s has %d log-probabilities, %s %d", i, nameA, len(a[i]), nameB, len(b[i]))
		}
		for k := range a[i] {
			diff := math.Abs(a[i][k] - b[i][k])
			sum += diff
			d.Positions++
			if diff > d.MaxAbs || math.IsNaN(diff) {
				d.MaxAbs, d.WorstText, d.WorstPosition = diff, i, k+1
			}
		}
	}
	if d.Positions > 0 {
		d.MeanAbs = sum / float64(d.Positions)
	}
	return d, nil
}

func meanOf(v [][]float64) float64 {
	sum, n := 0.0, 0
	for _, row := range v {
		for _, x := range row {
			sum += x
			n++
		}
	}
	return sum / float64(max(n, 1))
}

// engineGenerate times greedy generation of genTokens tokens for n copies of
// prompt, decoded together, and returns the first copy's tokens.
func engineGenerate(ctx context.Context, m *llm.Model, prompt []int32, n, genTokens, threads int) (seconds float64, first []int32, err error) {
	e, err := m.NewEngine(llm.EngineOptions{Parallel: n, Context: len(prompt) + genTokens, Threads: threads})
	if err != nil {
		return 0, nil, err
	}
	defer e.Close()
	greedy := llm.Sampling{Temperature: 0, TopP: 1, Seed: 1, MaxTokens: genTokens, IgnoreEOS: true}
	// Warm-up, as the reference does: first-call allocations.
	warm := greedy
	warm.MaxTokens = 4
	if _, err := e.Generate(ctx, []llm.GenerateRequest{{Tokens: prompt}}, warm, llm.CallOptions{}); err != nil {
		return 0, nil, fmt.Errorf("generate: %w", err)
	}
	// n requests rather than one with N samples: transformers evaluates
	// the prompt of each row, and so does the engine then.
	reqs := make([]llm.GenerateRequest, n)
	for i := range reqs {
		reqs[i] = llm.GenerateRequest{Tokens: prompt}
	}
	start := time.Now()
	res, err := e.Generate(ctx, reqs, greedy, llm.CallOptions{})
	if err != nil {
		return 0, nil, fmt.Errorf("generate: %w", err)
	}
	return time.Since(start).Seconds(), res[0][0].Tokens, nil
}

func leadingAgreement(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// addPeerResults puts the reference's training and generation results
// beside ours; ourFirst holds the engine's first sequence per row of gens.
func addPeerResults(row *loraRow, gens []generateRow, ourFirst [][]int32, peer peerReport) {
	row.Peft = peer.LoRA
	row.Speedup = row.Ours.TokensPerSecond / peer.LoRA.TokensPerSecond
	for k := range gens {
		theirs := peer.Generate.Results[k]
		gens[k].TheirSeconds, gens[k].TheirTPS = theirs.Seconds, theirs.TokensPerSecond
		gens[k].Speedup = gens[k].OursTPS / theirs.TokensPerSecond
		agree := leadingAgreement(ourFirst[k], theirs.FirstTokens)
		gens[k].GreedyAgreement = &agree
	}
}

func runBenchReference(c *cli.Context) error {
	rc, err := parseReferenceFlags(c)
	if err != nil {
		return err
	}
	ctx := c.Context
	rep := referenceReport{SystemInfo: cgo.SystemInfo(), LoadAverageStart: loadAverage(),
		Reference: referencePeer{Python: rc.python, Script: rc.script, Skipped: peerMissing(rc.python, rc.script)},
		Settings: map[string]any{"batch": rc.batch, "seq_len": rc.seqLen, "steps": rc.steps, "warmup": rc.warmup,
			"rank": rc.rank, "alpha": rc.rank, "targets": train.DefaultTargets, "lr": rc.lr, "gen_tokens": rc.genTokens,
			"sampling": "greedy", "threads": rc.threads, "sequences": rc.sequences}}
	if rep.Reference.Skipped != "" {
		fmt.Fprintf(c.App.ErrWriter, "transformers reference skipped: %s; %s\n", rep.Reference.Skipped, installPeersHint)
	}
	peerOn := rep.Reference.Skipped == ""
	// A run takes minutes on a real model: say where it is.
	progress := func(format string, args ...any) {
		fmt.Fprintf(c.App.ErrWriter, "bench reference: "+format+"\n", args...)
	}
	dir, err := os.MkdirTemp("", "agentrl-bench-reference")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	m, err := llm.Load(rc.model, llm.LoadOptions{GPULayers: 0})
	if err != nil {
		return err
	}
	defer m.Close()
	rep.Model = m.Info()
	texts, err := chatTokens(m)
	if err != nil {
		return fmt.Errorf("%s: %w", rc.model, err)
	}
	rep.Texts = len(texts)
	for _, t := range texts {
		rep.TextTokens += len(t)
	}
	prompt, err := m.Tokenize(m.RenderChat(referenceChats[0][:2], true), true, true)
	if err != nil {
		return fmt.Errorf("generation prompt: %w", err)
	}
	rep.Settings["gen_prompt_tokens"] = len(prompt)
	batch := trainingBatch(texts, rc.batch, rc.seqLen)

	// 1. Log-probabilities, on as many threads as the largest setting;
	// transformers' come with the reference's first run below.
	logProbs, err := ourLogProbs(ctx, m, rc.model, texts, slices.Max(rc.threads))
	if err != nil {
		return err
	}
	progress("log-probabilities of %d texts: llama.cpp and the trainer done", len(texts))

	// 2 and 3 at each thread count: our side, then the reference's, so
	// both see nearly the same load.
	adapter := filepath.Join(dir, "initial-adapter.gguf")
	for i, threads := range rc.threads {
		row := loraRow{Threads: threads, LoadAverage: loadAverage()}
		row.Ours, err = train.Bench(ctx, rc.model, train.BenchConfig{Rank: rc.rank, Batch: rc.batch, SeqLen: rc.seqLen,
			Steps: rc.steps, Warmup: rc.warmup, Threads: threads, LR: rc.lr, Tokens: batch, Seed: 1, InitialAdapter: adapter})
		if err != nil {
			return fmt.Errorf("trainer at %d threads: %w", threads, err)
		}
		progress("%d threads: trainer %.0f tok/s", threads, row.Ours.TokensPerSecond)
		var gens []generateRow
		var ourFirst [][]int32
		for _, n := range rc.sequences {
			g := generateRow{Threads: threads, Sequences: n, LoadAverage: loadAverage()}
			var first []int32
			if g.OursSeconds, first, err = engineGenerate(ctx, m, prompt, n, rc.genTokens, threads); err != nil {
				return fmt.Errorf("engine at %d sequences, %d threads: %w", n, threads, err)
			}
			g.OursTPS = float64(n*rc.genTokens) / g.OursSeconds
			gens = append(gens, g)
			ourFirst = append(ourFirst, first)
			progress("%d threads: engine, %d sequences: %.0f tok/s", threads, n, g.OursTPS)
		}
		if peerOn {
			job := peerJob{
				Generate: &peerGenerateJob{Prompt: prompt, NewTokens: rc.genTokens, Sequences: rc.sequences},
				LoRA: &peerLoRAJob{Tokens: batch, Rank: rc.rank, Alpha: float64(rc.rank), Targets: train.DefaultTargets,
					Steps: rc.steps, Warmup: rc.warmup, LR: rc.lr, Seed: 1, Adapter: adapter},
			}
			if i == 0 {
				job.LogProbs = &peerLogProbsJob{Sequences: texts}
			}
			peer, err := runPeer(ctx, rc, threads, job, dir)
			if err != nil {
				return err
			}
			progress("%d threads: peft %.0f tok/s; transformers generate done", threads, peer.LoRA.TokensPerSecond)
			rep.Reference.Versions = peer.Versions
			if peer.LogProbs != nil {
				logProbs[implTransformers] = peer.LogProbs.LogProbs
			}
			addPeerResults(&row, gens, ourFirst, peer)
		}
		rep.LoRA = append(rep.LoRA, row)
		rep.Generate = append(rep.Generate, gens...)
	}
	rep.LoadAverageEnd = loadAverage()

	if rep.LogProbs, err = compareAll(logProbs); err != nil {
		return err
	}

	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReferenceReport(c.App.Writer, rep)
	return nil
}

// printReferenceReport writes the report as tables for a person.
func printReferenceReport(w io.Writer, rep referenceReport) {
	fmt.Fprintf(w, "model %s (%s, %d layers), %d texts, %d tokens\n", filepath.Base(rep.Model.Path), rep.Model.Architecture, rep.Model.Layers, rep.Texts, rep.TextTokens)
	fmt.Fprintf(w, "load average at start %s, at end %s\n", rep.LoadAverageStart, rep.LoadAverageEnd)
	if rep.Reference.Skipped != "" {
		fmt.Fprintf(w, "transformers reference skipped: %s; %s\n", rep.Reference.Skipped, installPeersHint)
	} else {
		v := rep.Reference.Versions
		fmt.Fprintf(w, "reference: torch %s, transformers %s, peft %s (%s)\n", v["torch"], v["transformers"], v["peft"], rep.Reference.Python)
	}

	fmt.Fprintf(w, "\nlog-probabilities, mean per token:")
	for _, name := range []string{implLlamaCpp, implTrainer, implTrainerF32, implTransformers} {
		if v, ok := rep.LogProbs.MeanLogProb[name]; ok {
			fmt.Fprintf(w, " %s %.4f", name, v)
		}
	}
	fmt.Fprintf(w, "\n  %-44s %11s %11s  %s\n", "pair", "max |diff|", "mean |diff|", "largest at text:position")
	for _, d := range rep.LogProbs.Pairs {
		fmt.Fprintf(w, "  %-44s %11.2e %11.2e  %d:%d\n", d.A+" vs "+d.B, d.MaxAbs, d.MeanAbs, d.WorstText, d.WorstPosition)
	}

	s := rep.Settings
	fmt.Fprintf(w, "\nLoRA training, %v x %v tokens, rank %v on q,k,v,o,gate,up,down, AdamW lr %v (tok/s: mean of the timed steps)\n",
		s["batch"], s["seq_len"], s["rank"], s["lr"])
	fmt.Fprintf(w, "  %-7s %-15s %13s %10s %8s  %s\n", "threads", "load average", "trainer tok/s", "peft tok/s", "speedup", "losses: trainer | peft")
	for _, r := range rep.LoRA {
		theirs, speedup, peftLosses := "-", "-", "-"
		if r.Peft != nil {
			theirs, speedup, peftLosses = fmt.Sprintf("%.0f", r.Peft.TokensPerSecond), fmt.Sprintf("%.2fx", r.Speedup), formatLosses(r.Peft.Losses)
		}
		fmt.Fprintf(w, "  %-7d %-15s %13.0f %10s %8s  %s | %s\n", r.Threads, r.LoadAverage, r.Ours.TokensPerSecond, theirs, speedup, formatLosses(r.Ours.Losses), peftLosses)
	}

	fmt.Fprintf(w, "\ngreedy generation, %v new tokens per sequence\n", s["gen_tokens"])
	fmt.Fprintf(w, "  %-7s %-9s %-15s %12s %18s %8s  %s\n", "threads", "sequences", "load average", "engine tok/s", "transformers tok/s", "speedup", "same first tokens")
	for _, g := range rep.Generate {
		theirs, speedup, agree := "-", "-", "-"
		if g.GreedyAgreement != nil {
			theirs, speedup, agree = fmt.Sprintf("%.0f", g.TheirTPS), fmt.Sprintf("%.2fx", g.Speedup), fmt.Sprint(*g.GreedyAgreement)
		}
		fmt.Fprintf(w, "  %-7d %-9d %-15s %12.0f %18s %8s  %s\n", g.Threads, g.Sequences, g.LoadAverage, g.OursTPS, theirs, speedup, agree)
	}
}

func formatLosses(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.4f", x)
	}
	return strings.Join(parts, " ")
}
