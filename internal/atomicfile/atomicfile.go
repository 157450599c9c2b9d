// Package atomicfile replaces files whole: a reader, or a run resumed
// after a kill or a power cut, finds the old content or the new one, never
// a part. A file is written to a temporary file beside it, synced to disk,
// and renamed over the path; the directory is synced too where the system
// allows, so that the rename itself survives a power cut.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with what write writes, mode 0644; path's directory
// must exist. When write or any step fails, path is left as it was and the
// temporary file is removed.
func Write(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	// A name of its own, hidden, so that two writers of one path cannot
	// mix their halves and listings of the directory do not show it.
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// WriteFile replaces path with data, as Write does.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Copy replaces to with the content of the file from, as Write does,
// creating to's directory: copies go into trees that may not exist yet.
func Copy(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return Write(to, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// syncDir makes the rename in dir durable where the system can sync a
// directory. The new file is in place either way, so a failure here does
// not fail the write.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
