// Package bpe learns and applies byte-level BPE vocabularies of the GPT-2
// kind, the "gpt2" tokenizer of llama.cpp.
//
// Text is first cut into pieces by the pre-tokenizer (Split), then each
// piece, as bytes, is merged pairwise by ranked merge rules into tokens.
// Every single byte is a token, so any text can be encoded, and Encode
// reproduces llama.cpp's tokenization token for token: the same splitting
// (including its Unicode tables), the same merge order. Learn builds the
// vocabulary from a corpus; WriteGGUF and FromGGUF store and load it in a
// model file.
package bpe
