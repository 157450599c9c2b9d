package rl

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadSweep(t *testing.T) {
	path := writeConfig(t, `out: grid
algorithms: [grpo, sft, grpo-kl]
envs: [math]
seeds: [1, 2]
init_from_sft: true
eval: {splits: [test, unseen], episodes: 8}
config:
  iterations: 2
  grpo: {group: 8}
overrides:
  sft: [iterations=1]
variants:
  grpo-kl: {algorithm: grpo, set: [grpo.kl=0.05]}
`)
	s, err := ReadSweep(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Out != filepath.Join(filepath.Dir(path), "grid") {
		t.Fatalf("out %s: want it beside the sweep file", s.Out)
	}
	var names []string
	for _, c := range s.cells() {
		names = append(names, c.name())
	}
	want := []string{"math-sft-seed1", "math-grpo-seed1", "math-grpo-kl-seed1", "math-sft-seed2", "math-grpo-seed2", "math-grpo-kl-seed2"}
	if !slices.Equal(names, want) {
		t.Fatalf("cells %v, want %v (seed by seed, sft first)", names, want)
	}
	sft, _ := s.config(sweepCell{"sft", "math", 2})
	grpo, _ := s.config(sweepCell{"grpo", "math", 2})
	kl, err := s.config(sweepCell{"grpo-kl", "math", 1})
	if err != nil {
		t.Fatal(err)
	}
	if sft.Iterations != 1 || grpo.Iterations != 2 || grpo.GRPO.Group != 8 || grpo.Seed != 2 ||
		grpo.InitAdapter != filepath.Join(s.Out, "math-sft-seed2", "adapters", "actor.gguf") || sft.InitAdapter != "" {
		t.Fatalf("sft %+v\ngrpo %+v", sft, grpo)
	}
	if kl.Algorithm != "grpo" || kl.Label != "grpo-kl" || kl.GRPO.KL != 0.05 || kl.GRPO.Group != 8 {
		t.Fatalf("variant: algorithm %s, label %s, kl %g", kl.Algorithm, kl.Label, kl.GRPO.KL)
	}
}

func TestSweepErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\nrepeats: 2\n", "unknown key repeats"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: []\n", "at least one"},
		{"algorithms: [grpo]\nenvs: [math]\nseeds: [1]\n", "out:"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\ninit_from_sft: true\n", "needs sft"},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\nconfig: {grpo: {group: 1}}\n", "grpo.group 1"},
		{"out: x\nalgorithms: [reinforce]\nenvs: [math]\nseeds: [1]\n", `algorithm "reinforce"`},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\noverrides: {ppo: [ppo.lr=1]}\n", `overrides for "ppo"`},
		{"out: x\nalgorithms: [grpo]\nenvs: [math]\nseeds: [1]\neval: {splits: [dev]}\n", "eval.splits"},
	} {
		if _, err := ReadSweep(writeConfig(t, c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.text, err, c.want)
		}
	}
}
