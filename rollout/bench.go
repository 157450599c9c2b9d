package rollout

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
)

// BenchConfig describes a rollout benchmark: Episodes episodes of at most
// Turns steps, Parallel at a time, driven by an LLMPolicy.
type BenchConfig struct {
	Env      string
	NewEnv   func() envs.Env
	Parallel int
	Episodes int
	Turns    int
	Sampling llm.Sampling
	Engine   llm.EngineOptions
	// Logf, when set, hears as each side starts: a side of the default
	// configuration takes minutes.
	Logf func(format string, args ...any)
}

// BenchSide is one way of running the benchmark's rollouts.
type BenchSide struct {
	// PrefixCache says whether the engine kept each conversation's cells
	// between turns (sessions and prefix cache) or evaluated every prompt
	// whole.
	PrefixCache bool    `json:"prefix_cache"`
	Seconds     float64 `json:"seconds"`
	Steps       int     `json:"steps"`
	// Prompt tokens evaluated and reused per episode.
	PromptTokensPerEpisode float64 `json:"prompt_tokens_per_episode"`
	CachedTokensPerEpisode float64 `json:"cached_tokens_per_episode"`
	GeneratedTokens        int64   `json:"generated_tokens"`
	EpisodesPerSecond      float64 `json:"episodes_per_s"`
	// DecodePct is the share of wall time spent inside llama_decode.
	DecodePct float64 `json:"decode_pct"`
}

// BenchResult compares the two sides on the same episodes.
type BenchResult struct {
	Env      string      `json:"env"`
	Parallel int         `json:"parallel"`
	Episodes int         `json:"episodes"`
	Turns    int         `json:"turns"`
	Plain    BenchSide   `json:"plain"`
	Cached   BenchSide   `json:"cached"`
	Ratios   BenchRatios `json:"ratios"`
}

// BenchRatios are plain / cached prompt tokens and cached / plain episodes
// per second.
type BenchRatios struct {
	FewerPromptTokens float64 `json:"fewer_prompt_tokens"`
	EpisodesPerSecond float64 `json:"episodes_per_s"`
}

// BenchRollouts runs the same episodes twice on m, first re-evaluating
// every prompt, then with sessions and the prefix cache; each side has an
// engine of its own, closed before the next starts.
func BenchRollouts(ctx context.Context, m *llm.Model, cfg BenchConfig) (BenchResult, error) {
	res := BenchResult{Env: cfg.Env, Parallel: cfg.Parallel, Episodes: cfg.Episodes, Turns: cfg.Turns}
	for _, cached := range []bool{false, true} {
		side, err := benchSide(ctx, m, cfg, cached)
		if err != nil {
			return res, err
		}
		if cached {
			res.Cached = side
		} else {
			res.Plain = side
		}
	}
	if res.Cached.PromptTokensPerEpisode > 0 {
		res.Ratios.FewerPromptTokens = res.Plain.PromptTokensPerEpisode / res.Cached.PromptTokensPerEpisode
	}
	if res.Plain.EpisodesPerSecond > 0 {
		res.Ratios.EpisodesPerSecond = res.Cached.EpisodesPerSecond / res.Plain.EpisodesPerSecond
	}
	return res, nil
}

func benchSide(ctx context.Context, m *llm.Model, cfg BenchConfig, cached bool) (BenchSide, error) {
	opts := cfg.Engine
	opts.Parallel = cfg.Parallel
	opts.NoPrefixCache = !cached
	e, err := m.NewEngine(opts)
	if err != nil {
		return BenchSide{}, err
	}
	defer e.Close()
	policy := &LLMPolicy{Engine: e, Sampling: cfg.Sampling}
	defer policy.Close()
	if cfg.Logf != nil {
		how := "re-evaluating every prompt"
		if cached {
			how = "with sessions and the prefix cache"
		}
		cfg.Logf("%s: %d episodes of at most %d turns, %d at a time, %s", cfg.Env, cfg.Episodes, cfg.Turns, cfg.Parallel, how)
	}
	start := time.Now()
	trajs, err := Run(ctx, Config{
		NewEnv: cfg.NewEnv, Parallel: cfg.Parallel, Episodes: cfg.Episodes, Split: envs.Test, MaxSteps: cfg.Turns,
	}, policy)
	if err != nil {
		return BenchSide{}, fmt.Errorf("bench rollouts %s: %w", cfg.Env, err)
	}
	wall := time.Since(start).Seconds()
	st := e.Stats()
	side := BenchSide{PrefixCache: cached, Seconds: wall, GeneratedTokens: st.GeneratedTokens,
		PromptTokensPerEpisode: float64(st.PromptTokens) / float64(len(trajs)),
		CachedTokensPerEpisode: float64(st.CachedTokens) / float64(len(trajs)),
		EpisodesPerSecond:      float64(len(trajs)) / wall,
		DecodePct:              100 * st.DecodeTime.Seconds() / wall,
	}
	for _, t := range trajs {
		side.Steps += len(t.Steps)
	}
	return side, nil
}

// ScoreBenchResult times scoring K candidate actions under one state.
type ScoreBenchResult struct {
	StateTokens  int `json:"state_tokens"`
	Candidates   int `json:"candidates"`
	ActionTokens int `json:"action_tokens"`
	// Best-of-Repeats seconds for one Score call of all candidates, each
	// evaluating the state again, and with the state evaluated once.
	PlainSeconds  float64 `json:"plain_s"`
	SharedSeconds float64 `json:"shared_s"`
	Speedup       float64 `json:"speedup"`
	Repeats       int     `json:"repeats"`
}

// BenchScoreCandidates scores k random candidate actions of actionTokens
// tokens under one random state of stateTokens tokens, as one Score call,
// on an engine that evaluates every prompt whole and on one that evaluates
// the shared state once. Every repeat draws a new state, so nothing carries
// over between repeats.
func BenchScoreCandidates(ctx context.Context, m *llm.Model, opts llm.EngineOptions, stateTokens, k, actionTokens, repeats int) (ScoreBenchResult, error) {
	res := ScoreBenchResult{StateTokens: stateTokens, Candidates: k, ActionTokens: actionTokens, Repeats: repeats}
	opts.Parallel = max(opts.Parallel, k)
	engines := make([]*llm.Engine, 2)
	for i := range engines {
		o := opts
		o.NoPrefixCache = i == 0
		e, err := m.NewEngine(o)
		if err != nil {
			return res, err
		}
		defer e.Close()
		engines[i] = e
	}
	rng := rand.New(rand.NewPCG(3, 4))
	vocab := m.Info().VocabSize
	randomTokens := func(n int) []int32 {
		t := make([]int32, n)
		for i := range t {
			t[i] = int32(rng.IntN(vocab))
		}
		return t
	}
	best := [2]float64{}
	for r := 0; r < repeats; r++ {
		state := randomTokens(stateTokens)
		reqs := make([]llm.ScoreRequest, k)
		for i := range reqs {
			reqs[i] = llm.ScoreRequest{PromptTokens: state, ContinuationTokens: randomTokens(actionTokens)}
		}
		for i, e := range engines {
			start := time.Now()
			if _, err := e.Score(ctx, reqs, llm.CallOptions{}); err != nil {
				return res, err
			}
			if s := time.Since(start).Seconds(); best[i] == 0 || s < best[i] {
				best[i] = s
			}
		}
	}
	res.PlainSeconds, res.SharedSeconds = best[0], best[1]
	res.Speedup = best[0] / best[1]
	return res, nil
}
