package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/models"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rl"
)

func benchAdaptersCommand() *cli.Command {
	return &cli.Command{
		Name:  "adapters",
		Usage: "memory of a trainer with 1 and 3 LoRA adapters on one base, and the cost of handing an adapter to the engine",
		Description: "Loads the model in a trainer with one adapter, adds two more, trains each one step, and reports the\n" +
			"process's resident memory at each point (Linux), so that the cost of an adapter shows beside the base\n" +
			"model's; then times the hand-over of the active adapter to an inference engine (written to a file in\n" +
			"memory, loaded as a llama.cpp adapter, the old one's cache entries dropped), as a training run does\n" +
			"after every iteration.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: modelUsage, Value: models.DefaultModel},
			&cli.IntFlag{Name: "rank", Value: rl.DefaultConfig().LoRA.Rank, Usage: "LoRA rank; default: a training run's (lora.rank)"},
			&cli.IntFlag{Name: "threads", Usage: "CPU threads (0: one per core)"},
			&cli.IntFlag{Name: "repeats", Value: 5, Usage: "hand-overs timed"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: runBenchAdapters,
	}
}

// adaptersBench is what bench adapters reports.
type adaptersBench struct {
	Model               string  `json:"model"`
	Rank                int     `json:"rank"`
	AdapterParameters   int64   `json:"adapter_parameters"`
	AdapterStateMiB     float64 `json:"adapter_state_mib"` // values, gradients, two moments
	RSSBeforeMiB        float64 `json:"rss_before_mib"`
	RSSOneAdapterMiB    float64 `json:"rss_1_adapter_mib"`
	RSSThreeAdaptersMiB float64 `json:"rss_3_adapters_mib"`
	HandOverMs          float64 `json:"handover_ms"` // mean
	AdapterFileMiB      float64 `json:"adapter_file_mib"`
}

func runBenchAdapters(c *cli.Context) error {
	path, err := models.Resolve(c.String("model"))
	if err != nil {
		return err
	}
	if c.Int("repeats") <= 0 {
		return fmt.Errorf("--repeats %d must be positive", c.Int("repeats"))
	}
	res := adaptersBench{Model: c.String("model"), Rank: c.Int("rank"), RSSBeforeMiB: rssMiB()}
	tr, err := train.New(path, train.Config{LoRA: train.LoRAConfig{Rank: c.Int("rank")}, Threads: c.Int("threads"), Adapter: "actor", Context: 512})
	if err != nil {
		return err
	}
	defer tr.Close()
	seq := []train.Sequence{{Tokens: make([]int32, 256)}}
	for i := range seq[0].Tokens {
		seq[0].Tokens[i] = int32(i * 7 % 1000)
	}
	step := func() error {
		if _, err := tr.Accumulate(seq, train.CrossEntropy{}); err != nil {
			return err
		}
		_, err := tr.Step()
		return err
	}
	if err := step(); err != nil {
		return err
	}
	res.RSSOneAdapterMiB = rssMiB()
	for _, name := range []string{"critic", "discriminator"} {
		if err := tr.AddAdapter(name, train.AdapterOptions{}); err != nil {
			return err
		}
		if err := tr.UseAdapter(name); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
	}
	res.RSSThreeAdaptersMiB = rssMiB()
	res.AdapterParameters = tr.Parameters()
	res.AdapterStateMiB = float64(tr.AdapterStateBytes()) / (1 << 20)

	m, err := llm.Load(path, llm.LoadOptions{})
	if err != nil {
		return err
	}
	defer m.Close()
	e, err := m.NewEngine(llm.EngineOptions{Parallel: 4, Context: 512, Threads: c.Int("threads")})
	if err != nil {
		return err
	}
	defer e.Close()
	collector := &rl.LocalCollector{Engine: e}
	defer collector.Close()
	snap := rl.Snapshot{Model: path}
	var total time.Duration
	for range c.Int("repeats") {
		start := time.Now()
		file, err := rl.HandOver(c.Context, tr, collector, snap, os.TempDir())
		if err != nil {
			return err
		}
		total += time.Since(start)
		for _, old := range snap.Adapters {
			os.Remove(old.Path)
		}
		snap.Adapters = []rl.AdapterFile{{Path: file, Scale: 1}}
	}
	for _, old := range snap.Adapters {
		os.Remove(old.Path)
	}
	res.HandOverMs = total.Seconds() * 1000 / float64(c.Int("repeats"))
	f, err := os.CreateTemp("", "adapter-*.gguf")
	if err != nil {
		return err
	}
	f.Close()
	defer os.Remove(f.Name())
	if err := tr.SaveAdapter(f.Name()); err != nil {
		return err
	}
	if st, err := os.Stat(f.Name()); err == nil {
		res.AdapterFileMiB = float64(st.Size()) / (1 << 20)
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(c.App.Writer, "%s, LoRA rank %d: %d parameters per adapter, %.1f MiB of trainer state each (file %.1f MiB)\n",
		res.Model, res.Rank, res.AdapterParameters, res.AdapterStateMiB, res.AdapterFileMiB)
	fmt.Fprintf(c.App.Writer, "resident memory: %.0f MiB before, %.0f MiB with 1 adapter, %.0f MiB with 3 (+%.0f MiB for 2 adapters)\n",
		res.RSSBeforeMiB, res.RSSOneAdapterMiB, res.RSSThreeAdaptersMiB, res.RSSThreeAdaptersMiB-res.RSSOneAdapterMiB)
	fmt.Fprintf(c.App.Writer, "hand-over to the engine (write, load, drop the old adapter): %.1f ms (mean of %d)\n", res.HandOverMs, c.Int("repeats"))
	return nil
}
