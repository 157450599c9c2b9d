package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ollamaModelLayer is the media type of the GGUF weights in an ollama
// manifest; adapters, templates and parameters are other layers.
const ollamaModelLayer = "application/vnd.ollama.image.model"

// ollamaDir is ollama's model store: $OLLAMA_MODELS, else ~/.ollama/models.
func ollamaDir() (string, error) {
	if dir := os.Getenv("OLLAMA_MODELS"); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory to find ollama's models in (set OLLAMA_MODELS): %w", err)
	}
	return filepath.Join(home, ".ollama", "models"), nil
}

// ollamaManifestPath maps NAME[:TAG] to the manifest's path under the
// store's manifests folder: "qwen2.5:0.5b" is
// registry.ollama.ai/library/qwen2.5/0.5b, "user/model" is
// registry.ollama.ai/user/model/latest, and "host/ns/model:tag" keeps its
// host.
func ollamaManifestPath(ref string) (string, error) {
	name, tag := ref, "latest"
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		name, tag = ref[:i], ref[i+1:]
	}
	parts := strings.Split(name, "/")
	switch len(parts) {
	case 1:
		parts = []string{"registry.ollama.ai", "library", parts[0]}
	case 2:
		parts = append([]string{"registry.ollama.ai"}, parts...)
	case 3:
	default:
		return "", fmt.Errorf("ollama model %q: want NAME[:TAG], NAMESPACE/NAME[:TAG] or HOST/NAMESPACE/NAME[:TAG]", ref)
	}
	for _, p := range append(parts, tag) {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, `\`) {
			return "", fmt.Errorf("ollama model %q: invalid name", ref)
		}
	}
	return filepath.Join(append(parts, tag)...), nil
}

// resolveOllama finds the GGUF blob of an ollama model.
func resolveOllama(ref string) (string, error) {
	if ref == "" {
		return "", errors.New("ollama: model name missing (want ollama:NAME[:TAG], e.g. ollama:qwen2.5:0.5b)")
	}
	store, err := ollamaDir()
	if err != nil {
		return "", err
	}
	rel, err := ollamaManifestPath(ref)
	if err != nil {
		return "", err
	}
	manifest := filepath.Join(store, "manifests", rel)
	raw, err := os.ReadFile(manifest)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("ollama model %s: no manifest at %s (is it pulled? `ollama pull %s`; the store is $OLLAMA_MODELS or ~/.ollama/models)", ref, manifest, ref)
	}
	if err != nil {
		return "", fmt.Errorf("ollama model %s: %w", ref, err)
	}
	var m struct {
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("ollama model %s: manifest %s: %w", ref, manifest, err)
	}
	for _, l := range m.Layers {
		if l.MediaType != ollamaModelLayer {
			continue
		}
		algo, hexDigest, ok := strings.Cut(l.Digest, ":")
		if !ok || algo != "sha256" || len(hexDigest) != 64 || strings.Trim(hexDigest, "0123456789abcdef") != "" {
			return "", fmt.Errorf("ollama model %s: manifest %s: invalid model layer digest %q", ref, manifest, l.Digest)
		}
		blob := filepath.Join(store, "blobs", "sha256-"+hexDigest)
		if _, err := os.Stat(blob); err != nil {
			return "", fmt.Errorf("ollama model %s: model blob %s is missing (pull it again with ollama)", ref, blob)
		}
		return blob, nil
	}
	return "", fmt.Errorf("ollama model %s: manifest %s has no model layer (%s)", ref, manifest, ollamaModelLayer)
}
