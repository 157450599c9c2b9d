package rl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
)

// handOver gives the collector the actor's current weights (see
// HandOver) and removes the previous hand-over file.
func (r *Run) handOver(ctx context.Context) error {
	path, err := HandOver(ctx, r.Trainer, r.collector, r.actorSnapshot(llm.Sampling{}), filepath.Join(r.Dir, "adapters"))
	if err != nil {
		return err
	}
	removeFile(r.actorFile)
	r.actorFile = path
	return nil
}

// HandOver writes the trainer's active adapter to a new file in memory
// (/dev/shm where there is one, else fallbackDir) and has the collector
// load it in place of the adapters of snap, the policy it replaces. It
// returns the new file, which the next snapshots name.
func HandOver(ctx context.Context, tr *train.Trainer, c Collector, snap Snapshot, fallbackDir string) (string, error) {
	return HandOverFile(ctx, tr.SaveAdapter, c, snap, fallbackDir)
}

// HandOverFile is HandOver of the adapter that write writes to the path
// it is given (e.g. a target network's average).
func HandOverFile(ctx context.Context, write func(path string) error, c Collector, snap Snapshot, fallbackDir string) (string, error) {
	dir := ramDir()
	if dir == "" {
		dir = fallbackDir
	}
	staleOnce.Do(func() { removeStale(dir) })
	// The process id in the name lets a later run remove the files of a
	// run that was killed before it could.
	f, err := os.CreateTemp(dir, fmt.Sprintf("agentrl-adapter-%d-*.gguf", os.Getpid()))
	if err != nil {
		return "", err
	}
	path := f.Name()
	f.Close()
	if err := write(path); err != nil {
		os.Remove(path)
		return "", err
	}
	snap.Adapters = []AdapterFile{{Path: path, Scale: 1}}
	if err := c.Load(ctx, snap); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("hand the adapter to the engine: %w", err)
	}
	return path, nil
}

var staleOnce sync.Once

// removeStale deletes the hand-over files in dir of processes that no
// longer run: a run killed outright leaves its files in memory.
func removeStale(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "agentrl-adapter-*-*.gguf"))
	for _, f := range files {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(f), "agentrl-adapter-%d-", &pid); err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			os.Remove(f)
		}
	}
}

// ramDir is a memory-backed directory for the hand-over files, or "".
func ramDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", ".agentrl-probe-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return ""
}
