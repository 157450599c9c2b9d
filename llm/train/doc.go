// Package train fine-tunes GGUF language models on a ggml backend: LoRA
// adapters (or every weight) of the llama, qwen2 and qwen3 architectures,
// with the losses reinforcement learning of agents needs (weighted token
// cross-entropy, DPO, PPO), AdamW, learning-rate schedules, gradient
// accumulation, packed batches, checkpoints, and adapters saved in the
// GGUF format llama.cpp loads.
//
// The forward pass is the same ggml computation llama.cpp runs for
// inference, so the trainer's log-probabilities match the inference
// engine's; the backward pass is written out from ggml's backward
// operations (see graph.go). Losses are computed in Go from the
// log-probabilities of the tokens seen, between the forward and backward
// halves of one graph.
package train
