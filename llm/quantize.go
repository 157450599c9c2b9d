package llm

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/llm/gguf"
)

// quantizeTypes names the file types Quantize writes, as llama-quantize
// names them (lower case here; Quantize accepts either case).
var quantizeTypes = map[string]cgo.FileType{
	"f32": cgo.FileTypeF32, "f16": cgo.FileTypeF16, "bf16": cgo.FileTypeBF16,
	"q8_0": cgo.FileTypeQ8_0, "q4_0": cgo.FileTypeQ4_0, "q4_1": cgo.FileTypeQ4_1,
	"q5_0": cgo.FileTypeQ5_0, "q5_1": cgo.FileTypeQ5_1, "q2_k": cgo.FileTypeQ2_K,
	"q3_k_s": cgo.FileTypeQ3_K_S, "q3_k_m": cgo.FileTypeQ3_K_M, "q3_k_l": cgo.FileTypeQ3_K_L,
	"q4_k_s": cgo.FileTypeQ4_K_S, "q4_k_m": cgo.FileTypeQ4_K_M,
	"q5_k_s": cgo.FileTypeQ5_K_S, "q5_k_m": cgo.FileTypeQ5_K_M, "q6_k": cgo.FileTypeQ6_K,
}

// QuantizeTypes lists the names Quantize accepts, sorted.
func QuantizeTypes() []string { return slices.Sorted(maps.Keys(quantizeTypes)) }

// Quantize writes the model at in with its weight matrices converted to
// typ (e.g. "q4_k_m", "q8_0"; see QuantizeTypes) at out, choosing each
// tensor's type as llama.cpp's llama-quantize does: norms stay F32, a
// K-quant mix gives some matrices more bits, and matrices whose rows are
// not whole blocks of the type fall back to a type whose blocks fit. The
// input's weights must be F32, F16 or BF16, except towards f32 and f16:
// those dequantise a quantised model (its values exactly, F16 rounding
// each to 11 significant bits), which on CPUs whose ggml kernels for the
// input's type are slow makes batched inference faster (SmolLM2's Q4_1
// file: docs/models.md). out appears only when complete.
func Quantize(in, out, typ string, threads int) error {
	ft, ok := quantizeTypes[strings.ToLower(typ)]
	if !ok {
		return fmt.Errorf("quantize: unknown type %q (want one of %s)", typ, strings.Join(QuantizeTypes(), ", "))
	}
	dequantize := ft == cgo.FileTypeF32 || ft == cgo.FileTypeF16
	if err := checkQuantizeInput(in, dequantize); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath)
	if err := cgo.QuantizeModel(in, tmpPath, ft, threads, dequantize); err != nil {
		return fmt.Errorf("quantize %s: %w", in, err)
	}
	if err := os.Rename(tmpPath, out); err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	return nil
}

// checkQuantizeInput validates in as a model whose weights llama.cpp
// quantises (F32, F16, BF16; any type when dequantising) before llama.cpp
// reads it.
func checkQuantizeInput(in string, dequantize bool) error {
	facts, err := inspect(in)
	if err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	if facts.typ != "model" {
		return fmt.Errorf("quantize %s: the file is a GGUF %s, not a model", in, facts.typ)
	}
	f, err := gguf.Open(in)
	if err != nil {
		return fmt.Errorf("quantize %s: %w", in, err)
	}
	defer f.Close()
	for _, t := range f.Tensors {
		switch t.Type {
		case gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16:
		default:
			if !dequantize {
				return fmt.Errorf("quantize %s: tensor %s is already %s; quantize from an F32, F16 or BF16 model (requantising loses accuracy twice), or dequantise it with type f16 or f32", in, t.Name, t.Type)
			}
		}
	}
	return nil
}
