package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "state.json")
	if err := WriteFile(path, []byte("old\n")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("write into a missing directory: err = %v, want not exist", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("old\n")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new\n" {
		t.Fatalf("read %q, %v; want the second write", got, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644", info.Mode(), err)
	}
	assertOnly(t, filepath.Join(dir, "sub"), "state.json")
}

func TestWriteFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.md")
	if err := WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		if _, err := w.Write([]byte("half of the n")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || err.Error() != "write "+path+": boom" {
		t.Fatalf("err = %v, want boom naming the path", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("after a failed write the file holds %q, want the old content", got)
	}
	assertOnly(t, dir, "report.md")
}

func TestCopy(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "a.gguf")
	if err := os.WriteFile(from, []byte("adapter"), 0o600); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(dir, "record", "run", "a.gguf")
	if err := Copy(from, to); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(to); err != nil || string(got) != "adapter" {
		t.Fatalf("copy holds %q, %v", got, err)
	}
	if err := Copy(filepath.Join(dir, "missing"), to); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("copy of a missing file: err = %v, want not exist", err)
	}
}

// assertOnly fails unless dir holds exactly the one file name: no
// temporary file left behind.
func assertOnly(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != name {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %v, want only %s", dir, names, name)
	}
}
