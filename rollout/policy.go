package rollout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
)

// Request asks a policy for the next action of one environment instance.
type Request struct {
	// Env is the environment's name.
	Env string
	// Messages is the conversation so far: the system message (the
	// environment's Instruction), then alternating user observations and
	// assistant actions, ending with the observation to act on. The slice
	// belongs to the runner: read it during Act, do not keep or modify it.
	Messages []chat.Message
	// Available lists the actions valid now, or is nil where the
	// environment does not enumerate them.
	Available []string
	// Instance is the environment instance the request comes from, so that
	// policies can ask it for an expert action (envs.Expert) or action
	// examples (ActionExamples). Policies must not call Reset or Step.
	Instance envs.Env
	// Slot numbers the runner's instances (0 to Parallel-1): a policy can
	// keep per-conversation state by slot, such as an inference session.
	// A slot's next episode is a new conversation in the same slot.
	Slot int
	// Episode is the episode's index in the run (0 to Episodes-1): the
	// episodes of one task in a group rollout differ only by it, so a
	// sampling policy draws each from its own random stream.
	Episode int
}

// Response is a policy's answer to one Request.
type Response struct {
	// Text is the model's raw output; the environment parses the action
	// from it.
	Text string
	// TokenIDs and LogProbs describe the generated tokens, where the policy
	// is a language model; other policies leave them nil.
	TokenIDs []int32
	LogProbs []float32
	// PromptTokenIDs are the tokens the model saw, the conversation
	// rendered after DroppedMessages messages were left out to fit its
	// context; training reuses them instead of tokenising again.
	PromptTokenIDs  []int32
	DroppedMessages int
	// ContextFull, when set, says why the policy could not act on this
	// request: its conversation does not fit the model's context even with
	// the history left out. The runner ends the episode there, as a step
	// limit would (a first turn that cannot fit fails its episode), and the
	// other requests of the batch go on.
	ContextFull error
	// Failed, when set, says why the policy has no action for this request
	// alone, such as an expert lost in a state an agent led it to. The
	// runner fails this episode with it, as it does on an environment's
	// error, and the other requests of the batch go on. An error that
	// concerns every request (a crashed model) is Act's error instead.
	Failed error
}

// Policy chooses actions. Act receives every environment that is waiting
// for an action at once, so that a language model can serve them in one
// batch, and returns one Response per Request, in order.
type Policy interface {
	Act(ctx context.Context, batch []Request) ([]Response, error)
}

// PolicyFunc adapts a function to the Policy interface.
type PolicyFunc func(ctx context.Context, batch []Request) ([]Response, error)

// Act calls f.
func (f PolicyFunc) Act(ctx context.Context, batch []Request) ([]Response, error) {
	return f(ctx, batch)
}

// ActionExamples is implemented by environments whose actions are free text
// and so cannot be listed (a search query, a question, an answer). The
// examples show the shape of an action, e.g. "search[red shoes]", and serve
// the Random policy.
type ActionExamples interface {
	ExampleActions() []string
}

// Expert acts with each environment's own expert (envs.Expert). Its
// trajectories are demonstrations. An expert that has no action in one
// state fails that episode only (Response.Failed); an environment without
// an expert stops the run.
func Expert() Policy {
	return PolicyFunc(func(_ context.Context, batch []Request) ([]Response, error) {
		out := make([]Response, len(batch))
		for i, req := range batch {
			expert, ok := req.Instance.(envs.Expert)
			if !ok {
				return nil, fmt.Errorf("expert policy: environment %s has no expert", req.Env)
			}
			action, err := expert.ExpertAction()
			if err != nil {
				out[i].Failed = fmt.Errorf("expert: %w", err)
				continue
			}
			out[i].Text = action
		}
		return out, nil
	})
}

// Random is a baseline policy. It picks uniformly among the available
// actions; where the environment does not list them, among its example
// actions (ActionExamples); failing that, among the examples its
// instruction gives, the lines that start with "Action:". It answers
// "Action: <choice>", the format every environment's instruction asks for.
// A Random policy driven by the runner is deterministic for a given seed,
// because the runner orders each batch by instance.
type Random struct {
	mu  sync.Mutex
	rng *rand.Rand
	// instructionExamples caches the examples found in each instruction.
	instructionExamples map[string][]string
}

// NewRandom returns a Random policy seeded with seed.
func NewRandom(seed int64) *Random {
	return &Random{
		rng:                 rand.New(rand.NewPCG(uint64(seed), 0x5eed)),
		instructionExamples: map[string][]string{},
	}
}

// errNoActions reports an environment that neither lists its actions nor
// gives examples, so that Random has nothing to draw from.
var errNoActions = errors.New("lists no available actions and gives no action examples")

// Act draws one action per request.
func (p *Random) Act(_ context.Context, batch []Request) ([]Response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Response, len(batch))
	for i, req := range batch {
		choices := req.Available
		if len(choices) == 0 {
			if ex, ok := req.Instance.(ActionExamples); ok {
				choices = ex.ExampleActions()
			}
		}
		if len(choices) == 0 && len(req.Messages) > 0 && req.Messages[0].Role == chat.System {
			choices = p.examplesIn(req.Messages[0].Content)
		}
		if len(choices) == 0 {
			return nil, fmt.Errorf("random policy: environment %s %w", req.Env, errNoActions)
		}
		out[i].Text = "Action: " + choices[p.rng.IntN(len(choices))]
	}
	return out, nil
}

// examplesIn returns the actions of the instruction's example lines
// ("Action: ...").
func (p *Random) examplesIn(instruction string) []string {
	if ex, ok := p.instructionExamples[instruction]; ok {
		return ex
	}
	var ex []string
	for _, line := range strings.Split(instruction, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "Action:"); ok && strings.TrimSpace(rest) != "" {
			ex = append(ex, envs.ParseAction(rest))
		}
	}
	p.instructionExamples[instruction] = ex
	return ex
}
