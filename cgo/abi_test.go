package cgo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestABI compiles a C file against the real headers of the pinned
// llama.cpp that asserts, with _Static_assert, the size and every field
// offset of each struct abi_types.h mirrors and the value of each enum
// constant it declares, then re-declares every prototype of abi_funcs.h,
// which fails to compile if a signature drifted.
func TestABI(t *testing.T) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler (%s) to check the ABI with", cc)
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/ollama/ollama").Output()
	if err != nil {
		t.Fatalf("locate the pinned llama.cpp module: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}

	var src strings.Builder
	src.WriteString("#include <stddef.h>\n#include \"llama.h\"\n#include \"ggml-backend.h\"\n#include \"ggml-backend-impl.h\"\n\n")
	nAsserts := 0
	assert := func(expr string, want int64) {
		fmt.Fprintf(&src, "_Static_assert((%s) == %d, \"%s == %d\");\n", expr, want, strings.ReplaceAll(expr, "\"", ""), want)
		nAsserts++
	}
	for name, typ := range mirroredStructs() {
		assert("sizeof("+name+")", int64(typ.Size()))
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Name == "_" { // padding cgo inserted
				continue
			}
			// cgo prefixes C fields that are Go keywords with "_".
			assert(fmt.Sprintf("offsetof(%s, %s)", name, strings.TrimPrefix(f.Name, "_")), int64(f.Offset))
		}
	}
	types, err := os.ReadFile("abi_types.h")
	if err != nil {
		t.Fatal(err)
	}
	enumerator := regexp.MustCompile(`(?m)^\s*([A-Z][A-Z0-9_]+)\s*=\s*(-?\d+)\s*,`)
	nEnums := 0
	for _, m := range enumerator.FindAllStringSubmatch(string(types), -1) {
		var v int64
		fmt.Sscan(m[2], &v)
		assert(m[1], v)
		nEnums++
	}
	if nEnums < 10 {
		t.Fatalf("found only %d enum constants in abi_types.h: the parser is broken", nEnums)
	}
	// backendreset.h writes two offsets into ggml's internal structs.
	shim, err := os.ReadFile("backendreset.h")
	if err != nil {
		t.Fatal(err)
	}
	offset := regexp.MustCompile(`(?m)^#define AGENTRL_\w+_OFFSET (\d+)\s+// (offsetof\(.*\))$`)
	offsets := offset.FindAllStringSubmatch(string(shim), -1)
	if len(offsets) != 2 {
		t.Fatalf("found %d offsets in backendreset.h, want 2", len(offsets))
	}
	for _, m := range offsets {
		var v int64
		fmt.Sscan(m[1], &v)
		assert(m[2], v)
	}
	fmt.Fprintf(&src, "\n#include \"%s\"\n", filepath.Join(here, "abi_funcs.h"))

	dir := t.TempDir()
	file := filepath.Join(dir, "abi_check.c")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cc, "-std=c11", "-fsyntax-only", "-Werror",
		"-I", filepath.Join(mod, "llama", "llama.cpp", "include"),
		"-I", filepath.Join(mod, "ml", "backend", "ggml", "ggml", "include"),
		"-I", filepath.Join(mod, "ml", "backend", "ggml", "ggml", "src"),
		file)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ABI mismatch with the pinned headers:\n%s", msg)
	}
	t.Logf("%d layout and enum assertions and the prototypes of abi_funcs.h hold against %s", nAsserts, mod)
}
