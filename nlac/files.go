package nlac

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentrl/agentrl/internal/atomicfile"
)

// writeAtomic replaces path with what write writes, gzipped or not
// (atomicfile.Write): a reader, or a run resumed after a kill, never sees
// half a file.
func writeAtomic(path string, gzipped bool, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, func(f io.Writer) error {
		var zw *gzip.Writer
		w := f
		if gzipped {
			zw = gzip.NewWriter(f)
			w = zw
		}
		bw := bufio.NewWriter(w)
		err := errors.Join(write(bw), bw.Flush())
		if zw != nil {
			err = errors.Join(err, zw.Close())
		}
		return err
	})
}

// writeJSONLines writes items as gzipped JSON lines, atomically.
func writeJSONLines[T any](path string, items []T) error {
	return writeAtomic(path, true, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, it := range items {
			if err := enc.Encode(it); err != nil {
				return err
			}
		}
		return nil
	})
}

// readJSONLines reads what writeJSONLines wrote, checking each item.
func readJSONLines[T any](path string, check func(*T) error) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []T
	dec := json.NewDecoder(zr)
	for {
		var it T
		if err := dec.Decode(&it); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s, line %d: %w", path, len(out)+1, err)
		}
		if err := check(&it); err != nil {
			return nil, fmt.Errorf("%s, line %d: %w", path, len(out)+1, err)
		}
		out = append(out, it)
	}
}

// writeJSON writes v as one JSON document, atomically.
func writeJSON(path string, v any) error {
	return writeAtomic(path, false, func(w io.Writer) error { return json.NewEncoder(w).Encode(v) })
}

// readJSON reads what writeJSON wrote into v.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
