package cgo

/*
#include <stdlib.h>
#include "abi.h"

static bool abort_requested(void * flag) { return __atomic_load_n((int *)flag, __ATOMIC_RELAXED) != 0; }
static void install_abort(struct llama_context * ctx, int * flag) { llama_set_abort_callback(ctx, abort_requested, flag); }
static void store_flag(int * flag, int v) { __atomic_store_n(flag, v, __ATOMIC_RELAXED); }
*/
import "C"

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// FlashAttn selects llama.cpp's flash-attention mode.
type FlashAttn int

const (
	FlashAttnAuto     FlashAttn = C.LLAMA_FLASH_ATTN_TYPE_AUTO
	FlashAttnDisabled FlashAttn = C.LLAMA_FLASH_ATTN_TYPE_DISABLED
	FlashAttnEnabled  FlashAttn = C.LLAMA_FLASH_ATTN_TYPE_ENABLED
)

// ContextParams are the options of NewContext.
type ContextParams struct {
	NCtx         int // total KV cells over all sequences (kv_unified) or per context
	NBatch       int // most tokens one Decode may take
	NUBatch      int // physical micro-batch
	NSeqMax      int // distinct sequences
	Threads      int // threads for single-token decoding
	ThreadsBatch int // threads for prompt processing
	FlashAttn    FlashAttn
	// KVUnified shares one KV buffer among all sequences, which makes
	// copying a shared prompt to several sequences free.
	KVUnified bool
}

// Context is a llama.cpp inference context. It must be used by one
// goroutine at a time.
type Context struct {
	c      *C.struct_llama_context
	nVocab int
	abort  *C.int // polled by llama.cpp during Decode
	// aborting mirrors *abort in Go, so that the log handler can tell the
	// errors llama.cpp reports for a requested abort from real ones.
	aborting atomic.Bool
}

// NewContext creates a context on model.
func NewContext(model *Model, p ContextParams) (*Context, error) {
	Init()
	params := C.llama_context_default_params()
	params.n_ctx = C.uint32_t(p.NCtx)
	params.n_batch = C.uint32_t(p.NBatch)
	params.n_ubatch = C.uint32_t(p.NUBatch)
	params.n_seq_max = C.uint32_t(p.NSeqMax)
	params.n_threads = C.int32_t(p.Threads)
	params.n_threads_batch = C.int32_t(p.ThreadsBatch)
	params.flash_attn_type = C.enum_llama_flash_attn_type(p.FlashAttn)
	params.kv_unified = C.bool(p.KVUnified)
	params.no_perf = true
	takeLastError()
	c := C.llama_init_from_model(model.c, params)
	if c == nil {
		return nil, errors.New(withLastError("llama.cpp could not create the context"))
	}
	abort := (*C.int)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int(0)))))
	C.install_abort(c, abort)
	return &Context{c: c, nVocab: model.NVocab(), abort: abort}, nil
}

// Free releases the context.
func (x *Context) Free() {
	if x.c != nil {
		C.llama_free(x.c)
		C.free(unsafe.Pointer(x.abort))
		x.c, x.abort = nil, nil
	}
}

// RequestAbort makes a running or the next Decode stop early with
// ErrAborted; any goroutine may call it. ClearAbort re-arms the context.
func (x *Context) RequestAbort() {
	if x.aborting.CompareAndSwap(false, true) {
		abortsRequested.Add(1)
	}
	C.store_flag(x.abort, 1)
}

func (x *Context) ClearAbort() {
	C.store_flag(x.abort, 0)
	if x.aborting.CompareAndSwap(true, false) {
		abortsRequested.Add(-1)
	}
}

// Decode errors.
var (
	ErrNoKVSlot = errors.New("llama_decode: no free KV-cache slot for the batch (context too small)")
	ErrAborted  = errors.New("llama_decode: aborted")
)

// Decode evaluates a batch. The caller must have checked token ids, positions
// and sequence ids against the model and context.
func (x *Context) Decode(b *Batch) error {
	switch r := C.llama_decode(x.c, b.c); {
	case r == 0:
		return nil
	case r == 1:
		return ErrNoKVSlot
	case r == 2:
		return ErrAborted
	default:
		return fmt.Errorf("llama_decode failed with code %d", int(r))
	}
}

// Logits returns the logits computed for the i-th token of the last decoded
// batch, which must have requested them (llama.cpp aborts otherwise). The
// slice points into llama.cpp's buffer and is valid until the next Decode.
func (x *Context) Logits(i int) []float32 {
	p := C.llama_get_logits_ith(x.c, C.int32_t(i))
	if p == nil {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(p)), x.nVocab)
}

// MemoryClear empties the KV cache (its metadata: the cells' contents are
// left to be overwritten).
func (x *Context) MemoryClear() { C.llama_memory_clear(C.llama_get_memory(x.c), false) }

// SeqRemove drops positions [p0, p1) of seq from the KV cache (p1 < 0 = to
// the end; seq < 0 = every sequence).
func (x *Context) SeqRemove(seq, p0, p1 int) bool {
	return bool(C.llama_memory_seq_rm(C.llama_get_memory(x.c), C.llama_seq_id(seq), C.llama_pos(p0), C.llama_pos(p1)))
}

// SeqCopy makes dst share src's cache cells in [p0, p1).
func (x *Context) SeqCopy(src, dst, p0, p1 int) {
	C.llama_memory_seq_cp(C.llama_get_memory(x.c), C.llama_seq_id(src), C.llama_seq_id(dst), C.llama_pos(p0), C.llama_pos(p1))
}

// SetAdapter activates a LoRA adapter with a scale (replacing its previous
// scale); it does not touch the base model.
func (x *Context) SetAdapter(a *Adapter, scale float32) error {
	if r := C.llama_set_adapter_lora(x.c, a.c, C.float(scale)); r != 0 {
		return fmt.Errorf("llama_set_adapter_lora failed with code %d", int(r))
	}
	return nil
}

// ClearAdapters deactivates every adapter.
func (x *Context) ClearAdapters() { C.llama_clear_adapter_lora(x.c) }

// SetEmbeddings makes Decode also extract embeddings. The engine uses it
// to force a graph rebuild: the pinned llama.cpp reuses the previous compute
// graph when only the active adapters changed (it compares the address of
// the adapter map, not its contents), so an adapter switch alone would be
// ignored.
func (x *Context) SetEmbeddings(on bool) { C.llama_set_embeddings(x.c, C.bool(on)) }

// Batch is a llama_batch in C memory, filled from Go without cgo calls.
type Batch struct {
	c        C.struct_llama_batch
	capacity int
	nSeqMax  int
	tokens   []C.llama_token
	pos      []C.llama_pos
	nSeqID   []C.int32_t
	seqIDs   []*C.llama_seq_id
	logits   []C.int8_t
}

// NewBatch allocates a batch of up to capacity tokens, each in up to nSeqMax
// sequences.
func NewBatch(capacity, nSeqMax int) *Batch {
	c := C.llama_batch_init(C.int32_t(capacity), 0, C.int32_t(nSeqMax))
	return &Batch{
		c: c, capacity: capacity, nSeqMax: nSeqMax,
		tokens: unsafe.Slice(c.token, capacity),
		pos:    unsafe.Slice(c.pos, capacity),
		nSeqID: unsafe.Slice(c.n_seq_id, capacity),
		seqIDs: unsafe.Slice(c.seq_id, capacity),
		logits: unsafe.Slice(c.logits, capacity),
	}
}

// Free releases the batch.
func (b *Batch) Free() {
	if b.capacity > 0 {
		C.llama_batch_free(b.c)
		b.capacity = 0
	}
}

func (b *Batch) Len() int      { return int(b.c.n_tokens) }
func (b *Batch) Capacity() int { return b.capacity }
func (b *Batch) Clear()        { b.c.n_tokens = 0 }

// Add appends a token at position pos of sequence seq; output requests its
// logits. It reports false when the batch is full.
func (b *Batch) Add(token int32, pos, seq int, output bool) bool {
	i := int(b.c.n_tokens)
	if i >= b.capacity {
		return false
	}
	b.tokens[i] = C.llama_token(token)
	b.pos[i] = C.llama_pos(pos)
	b.nSeqID[i] = 1
	unsafe.Slice(b.seqIDs[i], b.nSeqMax)[0] = C.llama_seq_id(seq)
	if output {
		b.logits[i] = 1
	} else {
		b.logits[i] = 0
	}
	b.c.n_tokens++
	return true
}

// Adapter is a LoRA adapter loaded from a llama.cpp GGUF adapter file.
type Adapter struct {
	c *C.struct_llama_adapter_lora
}

// LoadAdapter loads a LoRA adapter for model.
func LoadAdapter(model *Model, path string) (*Adapter, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	takeLastError()
	a := C.llama_adapter_lora_init(model.c, cpath)
	if a == nil {
		return nil, errors.New(withLastError("llama.cpp could not load adapter " + path))
	}
	return &Adapter{c: a}, nil
}

// Free releases the adapter; it must not be active in any context.
func (a *Adapter) Free() {
	if a.c != nil {
		C.llama_adapter_lora_free(a.c)
		a.c = nil
	}
}
