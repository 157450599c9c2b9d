// Package gguf reads and writes GGUF files, the model format of llama.cpp
// and ggml (version 3, little-endian).
//
// A file is a header (magic "GGUF", version, counts), typed metadata
// key/value pairs, tensor descriptions (name, shape in ggml order, element
// type, offset) and the tensor data, each tensor aligned to
// general.alignment (32 bytes by default).
//
// Read and Open validate everything ggml and llama.cpp's loader rely on
// (counts, lengths, types, shapes, offsets and data bounds) before any of it
// reaches C code, where a malformed file would abort the process. Errors wrap
// ErrNotGGUF, ErrTruncated or ErrInvalid. File.CheckLlamaMetadata adds the
// checks on metadata values that llama.cpp's loaders rely on.
package gguf
