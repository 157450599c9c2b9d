package rl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfig(t *testing.T) {
	path := writeConfig(t, "algorithm: ppo\nenv: webshop\nppo:\n  lr: 3e-5\nrollout:\n  tasks: 12\n")
	cfg, err := LoadConfig(path, []string{"ppo.clip=0.3", "seed=7", "model=\"m.gguf\""})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	if cfg.Algorithm != "ppo" || cfg.Env != "webshop" || cfg.PPO.LR != 3e-5 || cfg.PPO.Clip != 0.3 || cfg.Seed != 7 ||
		cfg.Model != "m.gguf" || cfg.Rollout.Tasks != 12 || cfg.Rollout.MaxTokens != want.Rollout.MaxTokens || cfg.GRPO != want.GRPO {
		t.Fatalf("config %+v", cfg)
	}
	// The YAML a run writes reads back as the same configuration.
	text, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := LoadConfig(writeConfig(t, string(text)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(mustYAML(t, back)) != string(text) {
		t.Fatalf("round trip changed the configuration:\n%s\n%s", text, mustYAML(t, back))
	}
}

func mustYAML(t *testing.T, c Config) []byte {
	t.Helper()
	b, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct {
		name, text string
		sets       []string
		want       string
	}{
		{"unknown key", "env: math\ngrpo:\n  lr: 1e-5\n  groups: 4\n", nil, "unknown key groups"},
		{"unknown section", "env: math\ngrpoo:\n  lr: 1e-5\n", nil, "unknown key grpoo"},
		{"unknown override", "env: math\n", []string{"rollout.temprature=0.5"}, "unknown key temprature"},
		{"bad type", "env: math\niterations: many\n", nil, "iterations"},
		{"invalid value", "env: math\ngrpo:\n  group: 1\n", nil, "grpo.group 1"},
		{"negative", "env: math\nrollout:\n  max_tokens: -3\n", nil, "rollout.max_tokens -3"},
		{"step timeout past a duration", "env: math\nrollout:\n  step_timeout: 1e10\n", nil, "rollout.step_timeout 1e+10 must be in [0, 86400]"},
		{"algorithm", "env: math\nalgorithm: reinforce\n", nil, `algorithm "reinforce"`},
		{"no env", "algorithm: sft\n", nil, "env: none given"},
		{"override syntax", "env: math\n", []string{"grpo.lr"}, "want key=value"},
		{"eto needs a warm start", "env: math\nalgorithm: eto\nwarm_start:\n  demos: 0\n", nil, "warm_start.demos 0"},
		{"reference", "env: math\ngrpo:\n  kl: 0.1\n  reference: sft\n", nil, `grpo.reference "sft"`},
		{"stepagent kl without irl", "env: webshop\nalgorithm: stepagent\nstepagent:\n  kl: 0.05\n", nil, "stepagent.kl 0.05 applies to the irl reflection only"},
		{"negative stepagent kl", "env: webshop\nalgorithm: stepagent\nstepagent:\n  reflection: irl\n  kl: -1\n", nil, "stepagent.kl -1 must not be negative"},
		{"discriminator pre-training without irl", "env: webshop\nalgorithm: stepagent\nstepagent:\n  discriminator_pretrain: 8\n", nil, "stepagent.discriminator_pretrain 8 applies to the irl reflection only"},
		{"negative discriminator pre-training", "env: webshop\nalgorithm: stepagent\nstepagent:\n  reflection: irl\n  discriminator_pretrain: -1\n", nil, "stepagent.discriminator_pretrain -1 must not be negative"},
		{"policy gate above the discriminator's", "env: webshop\nalgorithm: stepagent\nstepagent:\n  reflection: irl\n  min_accuracy: 0.95\n", nil, "stepagent.min_accuracy 0.95 must be 0 (off) or in (0.5, stepagent.max_accuracy 0.95)"},
		{"policy gate at chance", "env: webshop\nalgorithm: stepagent\nstepagent:\n  reflection: irl\n  min_accuracy: 0.4\n", nil, "stepagent.min_accuracy 0.4 must be 0 (off) or in (0.5"},
		{"policy gate without irl", "env: webshop\nalgorithm: stepagent\nstepagent:\n  min_accuracy: 0.6\n", nil, "stepagent.min_accuracy 0.6 applies to the irl reflection only"},
		{"residual discriminator without irl", "env: webshop\nalgorithm: stepagent\nstepagent:\n  discriminator_residual: true\n", nil, "stepagent.discriminator_residual applies to the irl reflection only"},
		{"stepagent baseline without irl", "env: webshop\nalgorithm: stepagent\nstepagent:\n  baseline: state\n", nil, "stepagent.baseline state applies to the irl reflection only"},
		{"unknown stepagent baseline", "env: webshop\nalgorithm: stepagent\nstepagent:\n  reflection: irl\n  baseline: episode\n", nil, `stepagent.baseline "episode": want cycle, state or tree`},
		{"warm-up branches without a temperature", "env: math\nalgorithm: nlac\n", []string{"nlac.warmup.branches=4", "nlac.warmup.branch_temperature=0"}, "nlac.warmup.branch_temperature 0 must be positive"},
		{"negative warm-up branches", "env: math\nalgorithm: nlac\n", []string{"nlac.warmup.branches=-1"}, "nlac.warmup.branches -1"},
		{"sft from an adapter", "env: math\nalgorithm: sft\ninit_adapter: runs/a/adapters/actor.gguf\n", nil, `init_adapter "runs/a/adapters/actor.gguf": the sft baseline trains a new adapter`},
		{"no refinement sampled", "env: math\nalgorithm: nlac\n", []string{"nlac.refine_samples=0"}, "nlac.refine_samples 0 must be at least 1"},
		{"greedy refinement samples", "env: math\nalgorithm: nlac\n", []string{"nlac.temperature=0", "nlac.refine_samples=2"}, "nlac.refine_samples 2: with nlac.temperature 0 every sample is the same"},
		{"refinement samples in NLQL", "env: math\nalgorithm: nlac\n", []string{"nlac.method=nlql", "nlac.refine_samples=4"}, "nlac.refine_samples 4: NLQL refines nothing"},
		{"refine share of everything", "env: math\nalgorithm: nlac\n", []string{"nlac.refine_share=1"}, "nlac.refine_share 1 must be in [0, 1)"},
		{"rewrite without rank", "env: math\nalgorithm: nlac\n", []string{"nlac.rewrite_overruled=true"}, "nlac.rewrite_overruled: only verdicts by rank"},
		{"replacement unknown", "env: math\nalgorithm: nlac\n", []string{"nlac.replace_with=critic"}, `nlac.replace_with "critic": want refinement or actor`},
		{"replacement without a successor model", "env: math\nalgorithm: nlac\n", []string{"nlac.replace_with=actor", "nlac.method=self_distill"}, "nlac.replace_with actor: the actor's candidates are judged from the successor model's futures"},
		{"replacement with refiner options", "env: math\nalgorithm: nlac\n", []string{"nlac.replace_with=actor", "nlac.refine_samples=2"}, "nlac.replace_with actor asks no refiner"},
		{"replacement with a rewrite", "env: math\nalgorithm: nlac\n", []string{"nlac.replace_with=actor", "nlac.refine_share=0.25", "nlac.rewrite_overruled=true"}, "nlac.replace_with actor asks no refiner"},
		{"replacement from a greedy actor", "env: math\nalgorithm: nlac\n", []string{"nlac.replace_with=actor", "rollout.temperature=0"}, "at rollout.temperature 0 the actor offers its action again"},
		{"refine share for NLQL", "env: math\nalgorithm: nlac\n", []string{"nlac.method=nlql", "nlac.refine_share=0.25"}, "nlac.refine_share 0.25: NLQL refines nothing"},
		{"f16 base with sampler ratios", "env: math\nalgorithm: ppo\nlora:\n  f16_base: true\n", nil, "lora.f16_base: ppo"},
		{"a learning rate of inf", "env: math\n", []string{"grpo.lr=.inf"}, "grpo.lr: must be a finite number"},
		{"a NaN clip", "env: math\n", []string{"ppo.clip=.nan"}, "ppo.clip: must be a finite number"},
		{"a temperature too low to sample", "env: math\n", []string{"rollout.temperature=0.0005"}, "rollout.temperature 0.0005: below 0.001 use 0"},
		{"sft epochs", "env: math\nalgorithm: sft\nsft:\n  epochs: 3\n", nil, "sft.epochs 3: the SFT baseline trains one epoch per iteration"},
	} {
		_, err := LoadConfig(writeConfig(t, c.text), c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestDefaultMemoryBudgetIsBounded(t *testing.T) {
	got := DefaultMemoryMiB()
	if got < 2048 || got > 32768 || got%512 != 0 {
		t.Fatalf("default lora.memory_mib %d: want a multiple of 512 in [2048, 32768]", got)
	}
	if DefaultConfig().LoRA.MemoryMiB != got {
		t.Errorf("DefaultConfig's lora.memory_mib %d, want DefaultMemoryMiB %d", DefaultConfig().LoRA.MemoryMiB, got)
	}
}

// TestKVStreams: NLAC keeps a KV stream per prompt of a role's call (NLQL
// per candidate), the others the parallel sequences', and the streams
// beyond those take at most an eighth of memory.
func TestKVStreams(t *testing.T) {
	// SmolLM2-135M's shape: 22.5 KiB per token, 45 MiB per stream of 2,048.
	info := llm.Info{Layers: 30, Heads: 9, HeadsKV: 3, Embedding: 576}
	const gib = 1 << 30
	cfg := DefaultConfig()
	cfg.Rollout.Parallel, cfg.Rollout.Context, cfg.NLAC.Batch, cfg.NLAC.Candidates = 16, 2048, 32, 4
	for _, c := range []struct {
		algorithm, method string
		memory            uint64
		want              int
	}{
		{"grpo", "", 24 * gib, 16},
		{"nlac", "nlac", 24 * gib, 32},
		{"nlac", "nlac", 0, 32}, // memory unknown
		{"nlac", "nlql", 24 * gib, 16 + 68},
		{"nlac", "nlql", 64 * gib, 128},
		{"nlac", "nlac", 2 * gib, 16 + 5},
	} {
		cfg.Algorithm, cfg.NLAC.Method = c.algorithm, c.method
		if got := cfg.kvStreams(info, c.memory); got != c.want {
			t.Errorf("%s %s with %d GiB: %d streams, want %d", c.algorithm, c.method, c.memory/gib, got, c.want)
		}
	}
}
