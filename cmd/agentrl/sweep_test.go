package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSweepSelectionLists checks that --seeds and --methods take
// comma-separated lists as well as repeated flags (the app splits no
// flag at commas): an error names the one item not in the grid, not the
// whole list, and nothing is trained.
func TestSweepSelectionLists(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "grid.yaml")
	if err := os.WriteFile(file, []byte("out: runs\nalgorithms: [sft, grpo, ppo]\nenvs: [math]\nseeds: [1, 2]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--methods", "grpo,bogus"}, `"bogus" is not among the sweep's algorithms`},
		{[]string{"--methods", "grpo", "--methods", "ppo, bogus"}, `"bogus" is not among the sweep's algorithms`},
		{[]string{"--seeds", "1,7"}, "seed 7 is not in the sweep's seeds"},
		{[]string{"--seeds", "2", "--seeds", "9"}, "seed 9 is not in the sweep's seeds"},
		{[]string{"--seeds", "-1"}, `--seeds "-1": a seed is a number`},
	} {
		_, err := runApp(t, newApp(), append([]string{"sweep", file}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sweep %v: error %v, want one saying %s", tc.args, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); !os.IsNotExist(err) {
		t.Errorf("a refused selection made the sweep's directory (%v)", err)
	}
}

func TestSplitList(t *testing.T) {
	got := splitList([]string{"grpo,nlac", " ppo ", "eto,,stepagent-irl,"})
	if want := []string{"grpo", "nlac", "ppo", "eto", "stepagent-irl"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := splitList(nil); len(got) != 0 {
		t.Errorf("no flag: got %q, want nothing (the whole grid)", got)
	}
}
