package models

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrl/agentrl/llm/gguf"
)

// Entry describes a model file of the cache.
type Entry struct {
	Name         string         `json:"name"` // the catalogue name, or the file's base name
	Path         string         `json:"path"`
	Architecture string         `json:"architecture"`
	Parameters   int64          `json:"parameters"`
	WeightTypes  map[string]int `json:"weight_types"` // tensors of each type
	SizeBytes    int64          `json:"size_bytes"`
	// Error says why the file could not be read; the other facts are then
	// missing.
	Error string `json:"error,omitempty"`
}

// TypesString lists the weight types, most tensors first: "q4_1 x 211, f32 x 61".
func (e Entry) TypesString() string {
	types := make([]string, 0, len(e.WeightTypes))
	for t := range e.WeightTypes {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b string) int {
		return cmp.Or(cmp.Compare(e.WeightTypes[b], e.WeightTypes[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%s x %d", t, e.WeightTypes[t])
	}
	return strings.Join(parts, ", ")
}

// List describes the GGUF files in the cache, sorted by name. An empty or
// missing cache is an empty list.
func List() ([]Entry, error) {
	dir, err := CacheDir()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.gguf"))
	if err != nil {
		return nil, err
	}
	var entries []Entry
	for _, path := range files {
		entries = append(entries, Describe(path))
	}
	slices.SortFunc(entries, func(a, b Entry) int { return cmp.Compare(a.Name, b.Name) })
	return entries, nil
}

// Describe reads what List shows of one GGUF file.
func Describe(path string) Entry {
	name := strings.TrimSuffix(filepath.Base(path), ".gguf")
	e := Entry{Name: name, Path: path, WeightTypes: map[string]int{}}
	fi, err := os.Stat(path)
	if err != nil {
		e.Error = err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			e.Error = "no such file"
		}
		return e
	}
	e.SizeBytes = fi.Size()
	f, err := gguf.Open(path)
	if err != nil {
		e.Error = err.Error()
		return e
	}
	defer f.Close()
	e.Architecture = f.Architecture()
	for _, t := range f.Tensors {
		n := int64(1)
		for _, d := range t.Shape {
			n *= d
		}
		e.Parameters += n
		e.WeightTypes[t.Type.String()]++
	}
	return e
}
