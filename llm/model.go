// Package llm is agentrl's backend-neutral language-model API over llama.cpp:
// loading GGUF models, tokenisation, chat templates, batched generation with
// continuous batching, scoring (log-probabilities of continuations) and LoRA
// adapters that switch without reloading the base model.
//
// Inputs are validated here, in Go, before anything reaches C.
package llm

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentrl/agentrl/cgo"
	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/llm/gguf"
)

// LoadOptions configure Load.
type LoadOptions struct {
	// GPULayers is the number of layers offloaded to a GPU; -1 offloads all
	// (the default when a GPU is present), 0 keeps the model on the CPU.
	GPULayers int
	// NoMmap reads the weights into memory instead of mapping the file.
	NoMmap bool
}

// Info describes a loaded model.
type Info struct {
	Path         string `json:"path"`
	Architecture string `json:"architecture"`
	Name         string `json:"name,omitempty"`
	Description  string `json:"description"`
	Parameters   uint64 `json:"parameters"`
	SizeBytes    uint64 `json:"size_bytes"`
	VocabSize    int    `json:"vocab_size"`
	ContextTrain int    `json:"context_length"`
	Embedding    int    `json:"embedding_length"`
	Layers       int    `json:"layers"`
	Heads        int    `json:"heads"`
	HeadsKV      int    `json:"heads_kv"`
	// KeyLength and ValueLength are the sizes of an attention head's key
	// and value (ARCH.attention.key_length, .value_length; 0 where the
	// model gives none: Embedding / Heads). Qwen3 and Gemma have heads
	// larger than that.
	KeyLength    int    `json:"key_length,omitempty"`
	ValueLength  int    `json:"value_length,omitempty"`
	ChatTemplate string `json:"chat_template,omitempty"`
	BOS          int32  `json:"bos"`
	EOS          int32  `json:"eos"`
}

// Model is a loaded GGUF model. Tokenisation and metadata are safe for
// concurrent use; inference goes through an Engine.
type Model struct {
	c    *cgo.Model
	info Info
	// offloaded says whether layers may run on a GPU (GPULayers not 0),
	// whose memory then holds the KV cache.
	offloaded bool
	// recurrent: the model's memory cannot be cut back part way, so no
	// prefix of a slot's cells can be reused (see scheduler.caching).
	recurrent bool
	// tensors in the model file, from which llama.cpp sizes its graphs.
	tensors int

	vocabOnce sync.Once
	vocab     vocabCache
}

// vocabCache holds per-token facts the engine needs for every generated
// token, read once from llama.cpp instead of through a cgo call per token.
type vocabCache struct {
	pieces   [][]byte // text of each token (special tokens render as "")
	eog      []bool   // whether each token ends generation
	controls []string // text of the control tokens, e.g. "<|im_start|>"
}

func (m *Model) vocabulary() *vocabCache {
	m.vocabOnce.Do(func() {
		n := m.info.VocabSize
		m.vocab = vocabCache{pieces: make([][]byte, n), eog: make([]bool, n)}
		for t := int32(0); t < int32(n); t++ {
			m.vocab.pieces[t] = m.c.Piece(t, false)
			m.vocab.eog[t] = m.c.IsEOG(t)
			if m.c.IsControl(t) {
				if text := string(m.c.Piece(t, true)); text != "" {
					m.vocab.controls = append(m.vocab.controls, text)
				}
			}
		}
	})
	return &m.vocab
}

// GPU describes the first GPU of the registered backends ("NVIDIA H200
// (CUDA)"), or is empty when there is none: where LoadOptions.GPULayers
// would place no layer.
func GPU() string {
	for _, d := range cgo.Devices() {
		if d.Type == "gpu" || d.Type == "igpu" {
			return d.Description + " (" + d.Backend + ")"
		}
	}
	return ""
}

// Load validates and loads a GGUF model.
func Load(path string, opts LoadOptions) (*Model, error) {
	facts, err := inspect(path)
	if err != nil {
		return nil, err
	}
	if facts.typ != "model" {
		return nil, fmt.Errorf("load %s: the file is a GGUF %s, not a model (pass adapters with --lora)", path, facts.typ)
	}
	arch := facts.arch
	m, err := cgo.LoadModel(path, cgo.ModelParams{GPULayers: opts.GPULayers, UseMmap: !opts.NoMmap})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if m.HasEncoder() {
		m.Free()
		return nil, fmt.Errorf("load %s: unsupported architecture %s: encoder-decoder models cannot act as agents", path, arch)
	}
	model := &Model{c: m, offloaded: opts.GPULayers != 0, tensors: facts.tensors, recurrent: m.Recurrent()}
	model.info = Info{
		Path: path, Architecture: arch, Description: m.Desc(),
		Parameters: m.NParams(), SizeBytes: m.SizeBytes(), VocabSize: m.NVocab(),
		ContextTrain: m.NCtxTrain(), Embedding: m.NEmbd(), Layers: m.NLayer(),
		Heads: m.NHead(), HeadsKV: m.NHeadKV(), ChatTemplate: m.ChatTemplate(),
		BOS: m.BOS(), EOS: m.EOS(),
	}
	model.info.Name, _ = m.Meta("general.name")
	for key, length := range map[string]*int{".attention.key_length": &model.info.KeyLength, ".attention.value_length": &model.info.ValueLength} {
		if v, ok := m.Meta(arch + key); ok {
			*length, _ = strconv.Atoi(v)
		}
	}
	return model, nil
}

// Close frees the model. Engines and adapters made from it must be closed
// first.
func (m *Model) Close() { m.c.Free() }

// Info describes the model.
func (m *Model) Info() Info { return m.info }

// Tokenize converts text to token ids. addBOS prepends the beginning-of-
// sequence token when the model uses one; special-token text such as
// "<|im_start|>" becomes the special token only when parseSpecial is set, so
// that untrusted text (observations) cannot inject control tokens.
//
// Text must be UTF-8: invalid byte sequences are replaced by U+FFFD first,
// because llama.cpp's tokenizer aborts the process on some of them.
func (m *Model) Tokenize(text string, addBOS, parseSpecial bool) ([]int32, error) {
	return m.c.Tokenize(strings.ToValidUTF8(text, "\uFFFD"), addBOS, parseSpecial)
}

// Detokenize converts token ids back to text; special tokens are rendered as
// their text only when renderSpecial is set.
func (m *Model) Detokenize(tokens []int32, renderSpecial bool) (string, error) {
	return m.c.Detokenize(tokens, false, renderSpecial)
}

// IsEOG reports whether token ends generation.
func (m *Model) IsEOG(token int32) bool { return m.c.IsEOG(token) }

// RenderChat renders messages with the model's chat template, ending with
// the opening of an assistant turn when addAssistant is set. Models with no
// template, or one llama.cpp cannot render, get a plain "Role: content"
// layout.
//
// Control-token text inside a message (e.g. "<|im_end|>" in an
// observation) is broken with a zero-width space, so that contents cannot
// inject the template's markers when the prompt is tokenised with special
// tokens parsed.
func (m *Model) RenderChat(msgs []chat.Message, addAssistant bool) string {
	msgs = m.defuseControlText(msgs)
	if m.info.ChatTemplate != "" {
		cm := make([]cgo.ChatMessage, len(msgs))
		for i, msg := range msgs {
			cm[i] = cgo.ChatMessage{Role: msg.Role, Content: msg.Content}
		}
		if s, err := cgo.ApplyChatTemplate(m.info.ChatTemplate, cm, addAssistant); err == nil {
			return s
		}
	}
	return PlainChat(msgs, addAssistant)
}

func (m *Model) defuseControlText(msgs []chat.Message) []chat.Message {
	controls := m.vocabulary().controls
	var out []chat.Message
	for i, msg := range msgs {
		content := msg.Content
		for _, c := range controls {
			if strings.Contains(content, c) {
				_, size := utf8.DecodeRuneInString(c)
				content = strings.ReplaceAll(content, c, c[:size]+"\u200b"+c[size:])
			}
		}
		if content != msg.Content {
			if out == nil {
				out = slices.Clone(msgs)
			}
			out[i].Content = content
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// PlainChat is the fallback chat layout for models without a usable
// template.
func PlainChat(msgs []chat.Message, addAssistant bool) string {
	var b strings.Builder
	for _, msg := range msgs {
		role := msg.Role
		if role != "" {
			role = strings.ToUpper(role[:1]) + role[1:]
		}
		fmt.Fprintf(&b, "%s: %s\n\n", role, msg.Content)
	}
	if addAssistant {
		b.WriteString("Assistant:")
	}
	return b.String()
}

// DefaultThreads is the number of threads inference uses by default: one
// per core.
func DefaultThreads() int { return runtime.NumCPU() }

// ggufFacts is what inspect reads of a GGUF file.
type ggufFacts struct {
	typ, arch string // general.type ("model" when absent), general.architecture
	tensors   int
}

// inspect validates a GGUF file in Go (header, metadata, tensor table,
// sizes) so that llama.cpp, which aborts the process on some corrupt files,
// only ever sees well-formed ones.
func inspect(path string) (ggufFacts, error) {
	f, err := gguf.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ggufFacts{}, fmt.Errorf("load %s: no such file", path)
		}
		return ggufFacts{}, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	if err := f.CheckLlamaMetadata(); err != nil {
		return ggufFacts{}, fmt.Errorf("load %s: %w", path, err)
	}
	facts := ggufFacts{arch: f.Architecture(), tensors: len(f.Tensors)}
	facts.typ, _ = f.GetString("general.type")
	if facts.typ == "" {
		facts.typ = "model"
	}
	if facts.arch == "" {
		return ggufFacts{}, fmt.Errorf("load %s: no general.architecture in the GGUF metadata", path)
	}
	return facts, nil
}
