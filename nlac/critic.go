package nlac

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/rollout"
)

// roleModel plays the critic's roles through the collector: it renders a
// role's prompt for a transition at the largest view that fits the
// context, samples the role's texts with the policy snapshots of the
// actor, the critic and the critic's target, and checks actions in the
// environment.
type roleModel struct {
	cfg       rl.NLACConfig
	prompts   *Prompts
	model     *llm.Model
	collector rl.Collector
	newEnv    func() envs.Env
	// instruction is the environment's instructions to the agent.
	instruction string
	// context is the engine's context per sequence.
	context int
	// actionTokens bound an action and rolloutTemperature samples it, as
	// in the rollouts.
	actionTokens       int
	rolloutTemperature float64
	// maxSteps and stepTimeout bound NLRL's rollouts as the iteration's
	// (0: the environment's limit; no timeout).
	maxSteps    int
	stepTimeout time.Duration
	// actor, critic and target are the snapshots of the policy, the
	// successor model (which also evaluates and refines) and its EMA.
	actor, critic, target rl.Snapshot
	// envSteps counts the environment steps of the checks.
	envSteps int64
	// progress receives a line per batch of generations (nil: none).
	progress func(format string, args ...any)
}

// newRoleModel plays the roles of a run with configuration cfg through
// collector.
func newRoleModel(cfg rl.Config, prompts *Prompts, model *llm.Model, collector rl.Collector, newEnv func() envs.Env) *roleModel {
	return &roleModel{
		cfg: cfg.NLAC, prompts: prompts, model: model, collector: collector, newEnv: newEnv, instruction: envs.SpecOf(newEnv).Instruction,
		context: cfg.Rollout.Context, actionTokens: cfg.Rollout.MaxTokens, rolloutTemperature: cfg.Rollout.Temperature,
		maxSteps: cfg.Rollout.MaxSteps, stepTimeout: cfg.Rollout.StepTimeoutDuration(),
	}
}

// errTooLong marks a transition whose prompt does not fit the context at
// any view; it is skipped and counted.
var errTooLong = errors.New("the prompt does not fit the context")

// form is how this run writes future descriptions.
func (m *roleModel) form() futureForm { return futureForm{outcomeFirst: m.cfg.OutcomeFirst} }

// prompt renders a role's conversation for transition t in the largest
// view that leaves room for reserve tokens (an answer, or a target text
// of that length), and returns it with its tokens.
func (m *roleModel) prompt(role string, t Transition, action string, fill func(*promptData), reserve int) ([]chat.Message, []int32, error) {
	for _, v := range views(m.cfg.HistorySteps) {
		d := promptData{Instruction: clip(m.instruction, v.instructionChars), History: transcript(t.Episode, t.Step, v), Action: action,
			OutcomeFirst: m.cfg.OutcomeFirst, WholeReply: t.Episode.Trajectory.WholeReply}
		if fill != nil {
			fill(&d)
		}
		msgs, err := m.prompts.render(role, d)
		if err != nil {
			return nil, nil, err
		}
		tokens, err := m.model.Tokenize(m.model.RenderChat(msgs, true), true, true)
		if err != nil {
			return nil, nil, err
		}
		if len(tokens)+reserve <= m.context {
			return msgs, tokens, nil
		}
	}
	return nil, nil, errTooLong
}

// promptTokens is prompt's tokens, nil when the prompt does not fit the
// context at any view (the transition is then skipped and counted).
func (m *roleModel) promptTokens(role string, t Transition, action string, fill func(*promptData), reserve int) ([]int32, error) {
	_, tokens, err := m.prompt(role, t, action, fill, reserve)
	if errors.Is(err, errTooLong) {
		return nil, nil
	}
	return tokens, err
}

// generateSome is generate over the prompts that are not nil; the others
// get no texts.
func (m *roleModel) generateSome(ctx context.Context, what string, snap rl.Snapshot, prompts [][]int32, n, maxTokens int, temperature float64, seed uint64) ([][]string, error) {
	var idx []int
	var some [][]int32
	for i, p := range prompts {
		if p != nil {
			idx = append(idx, i)
			some = append(some, p)
		}
	}
	texts, err := m.generate(ctx, what, snap, some, n, maxTokens, temperature, seed)
	if err != nil {
		return nil, err
	}
	out := make([][]string, len(prompts))
	for k, i := range idx {
		out[i] = texts[k]
	}
	return out, nil
}

// generate samples n texts of at most maxTokens tokens for each prompt
// with the snapshot's adapters, at the roles' temperature (temperature
// 0: greedy); what names them in the progress line.
func (m *roleModel) generate(ctx context.Context, what string, snap rl.Snapshot, prompts [][]int32, n, maxTokens int, temperature float64, seed uint64) ([][]string, error) {
	if len(prompts) == 0 {
		return nil, nil
	}
	start := time.Now()
	s := llm.DefaultSampling()
	s.MaxTokens, s.Temperature, s.Seed = maxTokens, float32(temperature), int64(seed>>1)
	snap.Sampling = s
	res, err := m.collector.Generate(ctx, snap, prompts, n)
	if err != nil {
		return nil, err
	}
	if m.progress != nil {
		// What the call's time went on: the prompts' tokens, those the
		// engine computed (the rest came from its prefix cache), and the
		// sampled ones.
		promptTokens, evaluated, generated := 0, 0, 0
		for i, r := range res {
			promptTokens += len(prompts[i])
			for _, c := range r {
				evaluated += c.EvaluatedTokens
				generated += len(c.Tokens)
			}
		}
		m.progress("  %s: %d x %d in %.1fs (%d prompt tokens, %d evaluated; %d generated)", what, len(prompts), n, time.Since(start).Seconds(), promptTokens, evaluated, generated)
	}
	out := make([][]string, len(res))
	for i, r := range res {
		for _, c := range r {
			out[i] = append(out[i], strings.TrimSpace(c.Text))
		}
	}
	return out, nil
}

// sequence is a role's conversation with target as the assistant's
// answer, loss on the answer: the critic's training sequence. ok is false
// when it does not fit the context.
func (m *roleModel) sequence(msgs []chat.Message, target string) (train.Sequence, bool, error) {
	full := append(append([]chat.Message(nil), msgs...), chat.Message{Role: chat.Assistant, Content: target})
	s, err := train.ChatSequence(m.model, full)
	if err != nil {
		return s, false, err
	}
	return s, len(s.Tokens) <= m.context, nil
}

// criticSequence is the successor model's training sequence of a
// record's backed-up target: its prompt at (s, a), in the view of the
// state that leaves the target room, then the target. The target may run
// longer than the futures the model samples (nlac.future_tokens): a
// terminal one holds the final observation and the outcome. ok is false
// when it does not fit the context at any view.
func (m *roleModel) criticSequence(rec Record) (s train.Sequence, ok bool, err error) {
	target, err := m.model.Tokenize(rec.Target, false, false)
	if err != nil {
		return s, false, err
	}
	msgs, _, err := m.prompt(roleSuccessor, rec.T, rec.Action, nil, max(m.cfg.FutureTokens, len(target)+8))
	if errors.Is(err, errTooLong) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	return m.sequence(msgs, rec.Target)
}

// distillSequence is the actor's prompt at the transition's state followed
// by the action as an assistant turn, loss on the action: a term of
// -log pi(a | s). ok is false when it does not fit the context.
func (m *roleModel) distillSequence(t Transition, action string) (train.Sequence, bool, error) {
	prompt := t.step().PromptTokenIDs
	if len(prompt) == 0 {
		return train.Sequence{}, false, fmt.Errorf("episode %d step %d: no prompt token ids (the buffer's episodes must come from a language-model policy)", t.Episode.Trajectory.Seed, t.Step+1)
	}
	// The action's tokens as the actor would generate them after any
	// prompt: an assistant turn's, through its end-of-turn token.
	_, turn, err := train.AssistantTurn(m.model, []chat.Message{{Role: chat.User, Content: "."}, {Role: chat.Assistant, Content: action}})
	if err != nil {
		return train.Sequence{}, false, err
	}
	s := train.ActionSequence(prompt, turn)
	return s, len(s.Tokens) <= m.context, nil
}

// check plays each transition's episode up to its state again and takes
// the candidate action there, reporting whether the environment accepts
// it. Environments are deterministic given split and seed, so the replay
// reaches the very state the agent was in. An environment that fails
// one transition's replay (a remote one that times out, say) fails that
// transition alone, in errs: the refinement goes unchecked and counts as
// invalid, and the iteration goes on. err is the context's end.
func (m *roleModel) check(ctx context.Context, ts []Transition, actions []string) (valid []bool, errs []error, err error) {
	valid = make([]bool, len(ts))
	errs = make([]error, len(ts))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range min(8, len(ts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := m.newEnv()
			defer envs.Close(env)
			for i := range jobs {
				if ctx.Err() != nil {
					continue
				}
				ok, steps, err := replayAndTry(env, ts[i], actions[i])
				valid[i], errs[i] = ok, err
				mu.Lock()
				m.envSteps += int64(steps)
				mu.Unlock()
			}
		}()
	}
	for i := range ts {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return valid, errs, nil
}

// replayTo resets env to the transition's task and replays the actions
// before its step, reaching the state the agent acted in; it returns the
// steps it took.
func replayTo(env envs.Env, t Transition) (int, error) {
	tr := &t.Episode.Trajectory
	if _, err := env.Reset(tr.Split, tr.Seed); err != nil {
		return 0, fmt.Errorf("replay %s seed %d: %w", tr.Split, tr.Seed, err)
	}
	for i := range t.Step {
		res, err := env.Step(tr.Steps[i].Action)
		if err != nil {
			return i + 1, fmt.Errorf("replay %s seed %d step %d: %w", tr.Split, tr.Seed, i+1, err)
		}
		if res.Done {
			return i + 1, fmt.Errorf("replay %s seed %d: the episode ended at step %d, before the transition's step %d (is the environment deterministic?)", tr.Split, tr.Seed, i+1, t.Step+1)
		}
	}
	return t.Step, nil
}

// replayAndTry replays the transition's state in env and takes action
// there; it reports whether the environment accepted it and how many
// steps it took.
func replayAndTry(env envs.Env, t Transition, action string) (bool, int, error) {
	steps, err := replayTo(env, t)
	if err != nil {
		return false, steps, err
	}
	res, err := env.Step(action)
	if err != nil {
		tr := &t.Episode.Trajectory
		return false, steps + 1, fmt.Errorf("replay %s seed %d: %w", tr.Split, tr.Seed, err)
	}
	return res.Info.ValidAction, steps + 1, nil
}

// expertActions replays each transition's state and asks the
// environment's expert what it would do there; it also returns the
// environment steps the replays took.
func (m *roleModel) expertActions(ctx context.Context, ts []Transition) ([]string, int64, error) {
	out := make([]string, len(ts))
	env := m.newEnv()
	defer envs.Close(env)
	ex, ok := env.(envs.Expert)
	if !ok {
		return nil, 0, fmt.Errorf("the environment %s has no built-in expert", env.Spec().Name)
	}
	var replayed int64
	for i, t := range ts {
		if err := ctx.Err(); err != nil {
			return nil, replayed, err
		}
		steps, err := replayTo(env, t)
		replayed += int64(steps)
		if err != nil {
			return nil, replayed, err
		}
		tr := &t.Episode.Trajectory
		a, err := ex.ExpertAction()
		if err != nil {
			return nil, replayed, fmt.Errorf("expert at %s seed %d step %d: %w", tr.Split, tr.Seed, t.Step+1, err)
		}
		out[i] = textAction(tr.WholeReply, a)
	}
	return out, replayed, nil
}

// takenByExpert tells, for each open record (by index into recs), whether
// its action is what the environment's expert does in that state: the
// verdict the warm-up teaches the evaluator. It is nil where the
// environment has no expert, and where the expert fails in one of the
// states (said in the progress): a measurement, which must not stop the
// run, and whose replays are not counted as its environment steps.
func (m *roleModel) takenByExpert(ctx context.Context, recs []Record, open []int) (map[int]bool, error) {
	env := m.newEnv()
	defer envs.Close(env)
	if _, ok := env.(envs.Expert); !ok {
		return nil, nil
	}
	ts := make([]Transition, len(open))
	for k, i := range open {
		ts[k] = recs[i].T
	}
	experts, _, err := m.expertActions(ctx, ts)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	if err != nil {
		if m.progress != nil {
			m.progress("  no split of the judgements by the expert's actions this iteration: %v", err)
		}
		return nil, nil
	}
	out := make(map[int]bool, len(open))
	for k, i := range open {
		out[i] = envs.Equivalent(env, recs[i].T.step().Action, experts[k])
	}
	return out, nil
}

// transitionsOf lists every step of the episodes as transitions.
func transitionsOf(eps []*Episode) []Transition {
	var out []Transition
	for _, e := range eps {
		for s := range e.Trajectory.Steps {
			out = append(out, Transition{Episode: e, Step: s})
		}
	}
	return out
}

// episodesOf wraps trajectories as buffer episodes of an iteration.
func episodesOf(it int, trajs []rollout.Trajectory) []*Episode {
	out := make([]*Episode, 0, len(trajs))
	for i := range trajs {
		if len(trajs[i].Steps) > 0 {
			out = append(out, &Episode{Iteration: it, Trajectory: trajs[i]})
		}
	}
	return out
}
