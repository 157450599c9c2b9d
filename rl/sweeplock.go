package rl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// sweepLockFile, in a sweep's out directory, is locked by the sweep
// running there: two sweeps training the same run at once would each
// overwrite the other's checkpoints. Sweep files may share an out
// directory (one experiment, runs in common) but run one at a time.
const sweepLockFile = ".sweep.lock"

// lockSweep takes the lock of the sweep directory out, or says which
// process holds it. The lock goes with the process (an flock), so a sweep
// killed by any means leaves none behind; unlock releases it earlier.
func lockSweep(out string) (unlock func(), err error) {
	path := filepath.Join(out, sweepLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another sweep is running in %s (process %s): wait for it or stop it; sweeps that share a directory run one at a time",
				out, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "%d\n", os.Getpid())
	}
	return func() { f.Close() }, nil
}
