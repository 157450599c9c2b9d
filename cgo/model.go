package cgo

/*
#include <stdlib.h>
#include "abi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// ModelParams are the options of LoadModel.
type ModelParams struct {
	GPULayers int  // layers to offload to a GPU; -1 = all
	UseMmap   bool // map the file instead of reading it
	VocabOnly bool // load the vocabulary only, no weights
}

// Model is a loaded llama.cpp model. It is safe for concurrent use by
// read-only calls (tokenisation, metadata); contexts made from it are not.
type Model struct {
	c     *C.struct_llama_model
	vocab *C.struct_llama_vocab
}

// LoadModel loads a GGUF model. The file must have been validated by the
// caller: llama.cpp reports most problems as a NULL model, but some corrupt
// tensors abort the process.
func LoadModel(path string, p ModelParams) (*Model, error) {
	Init()
	params := C.llama_model_default_params()
	params.n_gpu_layers = C.int32_t(p.GPULayers)
	params.use_mmap = C.bool(p.UseMmap)
	params.vocab_only = C.bool(p.VocabOnly)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	takeLastError()
	m := C.llama_model_load_from_file(cpath, params)
	if m == nil {
		return nil, errors.New(withLastError("llama.cpp could not load " + path))
	}
	return &Model{c: m, vocab: C.llama_model_get_vocab(m)}, nil
}

// Free releases the model. Contexts and adapters made from it must be freed
// first.
func (m *Model) Free() {
	if m.c != nil {
		C.llama_model_free(m.c)
		m.c, m.vocab = nil, nil
	}
}

func (m *Model) NParams() uint64   { return uint64(C.llama_model_n_params(m.c)) }
func (m *Model) SizeBytes() uint64 { return uint64(C.llama_model_size(m.c)) }
func (m *Model) NEmbd() int        { return int(C.llama_model_n_embd(m.c)) }
func (m *Model) NLayer() int       { return int(C.llama_model_n_layer(m.c)) }
func (m *Model) NHead() int        { return int(C.llama_model_n_head(m.c)) }
func (m *Model) NHeadKV() int      { return int(C.llama_model_n_head_kv(m.c)) }
func (m *Model) NCtxTrain() int    { return int(C.llama_model_n_ctx_train(m.c)) }
func (m *Model) HasEncoder() bool  { return bool(C.llama_model_has_encoder(m.c)) }

// Recurrent reports a model whose memory is recurrent state (Mamba, RWKV)
// in whole or in part (hybrid models): it cannot be cut back part way.
func (m *Model) Recurrent() bool {
	return bool(C.llama_model_is_recurrent(m.c)) || bool(C.llama_model_is_hybrid(m.c))
}
func (m *Model) NVocab() int { return int(C.llama_vocab_n_tokens(m.vocab)) }

// Desc is llama.cpp's one-line description (architecture, size, type).
func (m *Model) Desc() string {
	buf := make([]byte, 256)
	n := C.llama_model_desc(m.c, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	if n < 0 {
		return ""
	}
	return string(buf[:min(int(n), len(buf)-1)])
}

// Meta returns a scalar metadata value as a string.
func (m *Model) Meta(key string) (string, bool) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	buf := make([]byte, 512)
	for {
		n := C.llama_model_meta_val_str(m.c, ckey, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
		if n < 0 {
			return "", false
		}
		if int(n) < len(buf) {
			return string(buf[:n]), true
		}
		buf = make([]byte, int(n)+1)
	}
}

// ChatTemplate is the model's default chat template, or "" if it has none.
func (m *Model) ChatTemplate() string {
	t := C.llama_model_chat_template(m.c, nil)
	if t == nil {
		return ""
	}
	return C.GoString(t)
}

// Token ids with special meaning; -1 where the model has none.
func (m *Model) BOS() int32 { return int32(C.llama_vocab_bos(m.vocab)) }
func (m *Model) EOS() int32 { return int32(C.llama_vocab_eos(m.vocab)) }

// IsEOG reports whether token ends generation (EOS, EOT and the like).
func (m *Model) IsEOG(token int32) bool {
	return bool(C.llama_vocab_is_eog(m.vocab, C.llama_token(token)))
}

// IsControl reports whether token is a control token.
func (m *Model) IsControl(token int32) bool {
	return bool(C.llama_vocab_is_control(m.vocab, C.llama_token(token)))
}

// Tokenize converts text to token ids. addSpecial adds BOS/EOS as the model
// is configured to; parseSpecial turns special-token text (e.g.
// "<|im_start|>") into those tokens instead of plain text.
func (m *Model) Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	if len(text) > 1<<30 {
		return nil, errors.New("tokenize: text longer than 1 GiB")
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	tokens := make([]int32, len(text)+8)
	for {
		n := C.llama_tokenize(m.vocab, ctext, C.int32_t(len(text)),
			(*C.llama_token)(unsafe.Pointer(&tokens[0])), C.int32_t(len(tokens)),
			C.bool(addSpecial), C.bool(parseSpecial))
		switch {
		case n == C.INT32_MIN:
			return nil, errors.New("tokenize: too many tokens")
		case n < 0:
			tokens = make([]int32, -int(n))
		default:
			return tokens[:n], nil
		}
	}
}

// Piece is the text of one token; special selects whether control tokens
// are rendered. Pieces may be partial UTF-8 sequences.
func (m *Model) Piece(token int32, special bool) []byte {
	buf := make([]byte, 64)
	for {
		n := C.llama_token_to_piece(m.vocab, C.llama_token(token),
			(*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)), 0, C.bool(special))
		if n >= 0 {
			return buf[:n]
		}
		buf = make([]byte, -int(n))
	}
}

// Detokenize converts token ids back to text. removeSpecial drops the BOS/EOS
// the model adds; unparseSpecial renders special tokens as their text.
func (m *Model) Detokenize(tokens []int32, removeSpecial, unparseSpecial bool) (string, error) {
	if len(tokens) == 0 {
		return "", nil
	}
	n := m.NVocab()
	for i, t := range tokens {
		if t < 0 || int(t) >= n {
			return "", fmt.Errorf("detokenize: token %d at position %d outside the vocabulary of %d", t, i, n)
		}
	}
	buf := make([]byte, len(tokens)*8+16)
	for {
		r := C.llama_detokenize(m.vocab, (*C.llama_token)(unsafe.Pointer(&tokens[0])), C.int32_t(len(tokens)),
			(*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)), C.bool(removeSpecial), C.bool(unparseSpecial))
		if r >= 0 {
			return string(buf[:r]), nil
		}
		buf = make([]byte, -int(r))
	}
}

// ChatMessage is one message for ApplyChatTemplate.
type ChatMessage struct{ Role, Content string }

// ApplyChatTemplate renders messages with one of llama.cpp's built-in
// templates, selected by tmpl (a template's Jinja text or name). It fails
// with ErrUnknownTemplate when llama.cpp does not recognise tmpl.
func ApplyChatTemplate(tmpl string, msgs []ChatMessage, addAssistant bool) (string, error) {
	ctmpl := C.CString(tmpl)
	defer C.free(unsafe.Pointer(ctmpl))
	// The array lives in C memory: it holds C pointers and is read by C.
	size := C.size_t(max(len(msgs), 1)) * C.size_t(unsafe.Sizeof(C.struct_llama_chat_message{}))
	first := (*C.struct_llama_chat_message)(C.malloc(size))
	defer C.free(unsafe.Pointer(first))
	cmsgs := unsafe.Slice(first, len(msgs))
	total := 0
	for i, msg := range msgs {
		cmsgs[i].role = C.CString(msg.Role)
		cmsgs[i].content = C.CString(msg.Content)
		total += len(msg.Role) + len(msg.Content)
	}
	defer func() {
		for i := range msgs {
			C.free(unsafe.Pointer(cmsgs[i].role))
			C.free(unsafe.Pointer(cmsgs[i].content))
		}
	}()
	buf := make([]byte, 2*total+256)
	for {
		n := C.llama_chat_apply_template(ctmpl, first, C.size_t(len(msgs)), C.bool(addAssistant),
			(*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)))
		if n < 0 {
			return "", ErrUnknownTemplate
		}
		if int(n) <= len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, int(n))
	}
}

// ErrUnknownTemplate reports a chat template llama.cpp cannot render.
var ErrUnknownTemplate = errors.New("chat template not supported by llama.cpp")
