// Package initmodel makes new llama-architecture models: it learns a
// byte-level BPE tokenizer from a corpus, initialises the weights at random
// from a seed and writes a GGUF file that llama.cpp loads as it would any
// Llama model, with a ChatML chat template.
//
// The presets are small ("tiny", about 3.7 M parameters; "small", about 28 M)
// so that the model can be trained from scratch on one machine. Without a
// corpus, the tokenizer is learned from a built-in generated corpus of
// agent-style English (Corpus).
package initmodel
