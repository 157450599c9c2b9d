package rl

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestEpisodeProgress checks the progress lines of a long collection: at
// most one per interval, none for the last episode (the phase's own line
// follows), none without a log.
func TestEpisodeProgress(t *testing.T) {
	var lines []string
	logf := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	defer func(d time.Duration) { progressEvery = d }(progressEvery)

	progressEvery = time.Hour
	p := EpisodeProgress(logf, "rollout", 3)
	for done := 1; done <= 3; done++ {
		p(done)
	}
	if len(lines) != 0 {
		t.Errorf("lines within the first interval: %q", lines)
	}

	progressEvery = 0
	p = EpisodeProgress(logf, "eval test", 3)
	for done := 1; done <= 3; done++ {
		p(done)
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "  eval test: 1/3 episodes in ") || !strings.Contains(lines[1], "2/3 episodes") || !strings.Contains(lines[1], ", ETA ") {
		t.Errorf("progress lines %q", lines)
	}
	if EpisodeProgress(nil, "rollout", 3) != nil {
		t.Error("a callback without a log")
	}
}
