// Package rollout runs policies in environments and records what happens:
// the vectorised runner (this file), the policies (policy.go; a language
// model in llmpolicy.go), trajectories with the token ids the model
// generated (trajectory.go), summaries and demonstrations.
//
// The runner drives N environment instances, each in its own goroutine, for
// E episodes drawn from one split with seeds seed0, seed0+1, ... At every
// step it gathers the requests of all instances waiting for an action into
// ONE Policy.Act call, so that a language model serves them as one batch;
// an instance whose episode ends starts the next one if any remain. The
// result is one Trajectory per episode (trajectory.go, written as JSON lines
// as documented in docs/trajectories.md), which Summarize condenses and
// NewDemonstration turns into fine-tuning examples.
//
// A run is deterministic for deterministic environments and policies:
// episodes are handed to instances and requests are ordered in each batch by
// instance number, whatever the goroutines' timing.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
)

// Config describes a run.
type Config struct {
	// NewEnv makes a fresh environment instance; it is called from several
	// goroutines at once. Instances that implement io.Closer are closed
	// when the run ends or when they are discarded after a failure.
	NewEnv func() envs.Env
	// Parallel is the number of instances (default 1; at most Episodes are
	// used).
	Parallel int
	// Episodes is the number of episodes to run. Episode e plays the task
	// of seed Seed0 + e/Group as the group's sample e%Group.
	Episodes int
	// Group is the number of episodes of each task (default 1): group
	// rollouts (GRPO groups, exploration) play the same task instance
	// Group times in a row, which a policy tells apart by
	// Request.Episode.
	Group int
	Split envs.Split
	Seed0 int64
	// MaxSteps ends (truncates) an episode after this many steps; 0 means
	// the environment's Spec().MaxSteps.
	MaxSteps int
	// StepTimeout bounds each Reset and Step call; an instance that exceeds
	// it fails its episode and is replaced. 0 means no limit.
	StepTimeout time.Duration
	// Starts, when set, replaces Split and Seed0: episode e plays
	// Starts[e/Group], and Episodes must be len(Starts) x Group. The
	// policy then acts from a state partway through a task, with the
	// whole conversation before it (NLAC's NLRL ablation rolls out from
	// states of its replay buffer).
	Starts []Start
	// Progress, when set, is called after each finished episode, from one
	// goroutine, with the number finished so far.
	Progress func(done int)
}

// Start is a task and the actions that open its episode: the runner
// takes them as if the policy had, recording them as the trajectory's
// first steps (marked Replayed), before the policy acts. Environments
// are deterministic given split and seed, so the opening reaches the
// state the actions were first taken in.
type Start struct {
	Split   envs.Split
	Seed    int64
	Actions []string
}

// StepLimit is the number of steps after which an episode of an
// environment with spec is truncated: MaxSteps, or the environment's own
// limit when MaxSteps is 0. A result not above 0 means no limit is known,
// which fails the episode.
func (c *Config) StepLimit(spec envs.Spec) int {
	if c.MaxSteps == 0 {
		return spec.MaxSteps
	}
	return c.MaxSteps
}

func (c *Config) validate() error {
	switch {
	case c.NewEnv == nil:
		return errors.New("runner: no environment factory")
	case c.Episodes <= 0:
		return fmt.Errorf("runner: episodes must be positive, got %d", c.Episodes)
	case c.Group < 0:
		return fmt.Errorf("runner: group must not be negative, got %d", c.Group)
	case c.Parallel < 0:
		return fmt.Errorf("runner: parallel must not be negative, got %d", c.Parallel)
	case c.MaxSteps < 0:
		return fmt.Errorf("runner: max steps must not be negative, got %d", c.MaxSteps)
	case c.StepTimeout < 0:
		return fmt.Errorf("runner: step timeout must not be negative, got %v", c.StepTimeout)
	}
	if c.Starts == nil {
		if _, err := envs.ParseSplit(string(c.Split)); err != nil {
			return fmt.Errorf("runner: %w", err)
		}
		return nil
	}
	if want := len(c.Starts) * max(c.Group, 1); c.Episodes != want {
		return fmt.Errorf("runner: %d starts x group %d make %d episodes, not the %d asked for", len(c.Starts), max(c.Group, 1), want, c.Episodes)
	}
	for i, st := range c.Starts {
		if _, err := envs.ParseSplit(string(st.Split)); err != nil {
			return fmt.Errorf("runner: start %d: %w", i, err)
		}
	}
	return nil
}

// start gives episode ep's task and opening actions.
func (c *Config) start(ep int) Start {
	group := max(c.Group, 1)
	if c.Starts != nil {
		return c.Starts[ep/group]
	}
	return Start{Split: c.Split, Seed: c.Seed0 + int64(ep/group)}
}

// Run runs cfg.Episodes episodes with policy and returns their trajectories
// in episode order (by seed and sample, unless Starts are given). An
// environment failure, or a policy's failure on one request
// (Response.Failed), is recorded in its episode's Error and the run goes
// on; any other policy failure or the end of ctx stops the run, and Run returns
// the episodes completed so far with the error.
func Run(ctx context.Context, cfg Config, policy Policy) ([]Trajectory, error) {
	byEpisode := make([]*Trajectory, max(cfg.Episodes, 0))
	err := stream(ctx, cfg, policy, func(ep int, t *Trajectory) error {
		byEpisode[ep] = t
		return nil
	})
	out := make([]Trajectory, 0, len(byEpisode))
	for _, t := range byEpisode {
		if t != nil {
			out = append(out, *t)
		}
	}
	return out, err
}

// Stream is Run without keeping the trajectories: it calls emit with each
// finished episode, from a single goroutine; with deterministic
// environments and policy the order is the same on every run. An error
// from emit stops the run and is returned.
func Stream(ctx context.Context, cfg Config, policy Policy, emit func(*Trajectory) error) error {
	return stream(ctx, cfg, policy, func(_ int, t *Trajectory) error { return emit(t) })
}

// stream is Stream, telling emit each trajectory's episode index.
func stream(ctx context.Context, cfg Config, policy Policy, emit func(ep int, t *Trajectory) error) error {
	if cfg.Progress != nil {
		done, inner := 0, emit
		emit = func(ep int, t *Trajectory) error {
			if err := inner(ep, t); err != nil {
				return err
			}
			done++
			cfg.Progress(done)
			return nil
		}
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	if policy == nil {
		return errors.New("runner: no policy")
	}
	n := min(max(cfg.Parallel, 1), cfg.Episodes)
	// Every worker has at most one event in flight, so sends never block.
	events := make(chan event, n)
	quit := make(chan struct{})
	workers := make([]*worker, n)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{
			slot:   i,
			cfg:    &cfg,
			jobs:   make(chan int, 1),
			reply:  make(chan Response, 1),
			events: events,
			quit:   quit,
		}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run()
		}()
	}
	c := &coordinator{cfg: &cfg, policy: policy, emit: emit, workers: workers, events: events}
	err := c.loop(ctx)
	if err != nil {
		// Wake every worker: those waiting for an action, and those in a
		// timed call.
		close(quit)
		for _, w := range workers {
			close(w.reply)
		}
	}
	for _, w := range workers {
		close(w.jobs)
	}
	wg.Wait()
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		if serr := c.salvage(); serr != nil {
			return errors.Join(err, serr)
		}
	}
	return err
}

// event is what a worker tells the coordinator: either it waits for an
// action (req) or its episode is over (done).
type event struct {
	slot int
	req  Request
	done *Trajectory
}

// coordinator hands episodes to workers and batches their requests.
type coordinator struct {
	cfg     *Config
	policy  Policy
	emit    func(ep int, t *Trajectory) error
	workers []*worker
	events  chan event

	next     int           // next episode index to hand out
	busy     int           // workers running an episode
	nWaiting int           // busy workers waiting for an action
	idle     []int         // workers without an episode
	finished []*Trajectory // per worker: the episode it has just finished
	episode  []int         // per worker: the index of its latest episode
	waiting  []bool        // per worker: pending holds its request
	pending  []Request     // per worker
	batch    []Request     // reused across steps
	slots    []int         // batch[i] came from worker slots[i]
}

func (c *coordinator) loop(ctx context.Context) error {
	n := len(c.workers)
	c.finished = make([]*Trajectory, n)
	c.episode = make([]int, n)
	c.waiting = make([]bool, n)
	c.pending = make([]Request, n)
	c.batch = make([]Request, 0, n)
	c.slots = make([]int, 0, n)
	for i := range n {
		c.idle = append(c.idle, i)
	}
	if err := c.settle(); err != nil {
		return err
	}
	for c.busy > 0 {
		for c.nWaiting < c.busy {
			var ev event
			select {
			case ev = <-c.events:
			default:
				// Nothing is ready: wait for a worker or the end of ctx.
				select {
				case ev = <-c.events:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if ev.done != nil {
				c.busy--
				c.finished[ev.slot] = ev.done
				c.idle = append(c.idle, ev.slot)
			} else {
				c.pending[ev.slot] = ev.req
				c.waiting[ev.slot] = true
				c.nWaiting++
			}
			// Every busy worker has reported for this step: the set of
			// finished episodes is now independent of timing.
			if c.nWaiting == c.busy {
				if err := c.settle(); err != nil {
					return err
				}
			}
		}
		if c.busy == 0 {
			break
		}
		if err := c.act(ctx); err != nil {
			return err
		}
	}
	return nil
}

// settle emits the finished episodes and hands the next episodes to idle
// workers, both in worker order.
func (c *coordinator) settle() error {
	slices.Sort(c.idle)
	for _, s := range c.idle {
		if t := c.finished[s]; t != nil {
			c.finished[s] = nil
			if err := c.emit(c.episode[s], t); err != nil {
				return err
			}
		}
	}
	for len(c.idle) > 0 && c.next < c.cfg.Episodes {
		s := c.idle[0]
		c.idle = c.idle[1:]
		c.workers[s].jobs <- c.next
		c.episode[s] = c.next
		c.next++
		c.busy++
	}
	return nil
}

// salvage emits, once the run has stopped early and its workers are gone,
// the episodes that finished but were not emitted yet: those the
// coordinator had received, and those still in the events buffer.
func (c *coordinator) salvage() error {
	for drained := false; !drained; {
		select {
		case ev := <-c.events:
			if ev.done != nil {
				c.finished[ev.slot] = ev.done
			}
		default:
			drained = true
		}
	}
	for s, t := range c.finished {
		if t != nil {
			c.finished[s] = nil
			if err := c.emit(c.episode[s], t); err != nil {
				return err
			}
		}
	}
	return nil
}

// act sends the pending requests to the policy as one batch and returns
// each answer to its worker.
func (c *coordinator) act(ctx context.Context) error {
	c.batch, c.slots = c.batch[:0], c.slots[:0]
	for s, ok := range c.waiting {
		if ok {
			c.batch = append(c.batch, c.pending[s])
			c.slots = append(c.slots, s)
		}
	}
	resps, err := c.policy.Act(ctx, c.batch)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("runner: policy: %w", err)
	}
	if len(resps) != len(c.batch) {
		return fmt.Errorf("runner: policy answered %d requests with %d responses", len(c.batch), len(resps))
	}
	for i, s := range c.slots {
		c.workers[s].reply <- resps[i]
		c.waiting[s] = false
		c.pending[s] = Request{}
	}
	c.nWaiting = 0
	return nil
}

// maxStepsHint caps the steps preallocated per episode: most episodes are
// far shorter than their limit.
const maxStepsHint = 16

// errAborted ends a worker's episode when the run stops.
var errAborted = errors.New("run aborted")

// worker owns one environment instance and plays the episodes the
// coordinator hands it.
type worker struct {
	slot   int
	cfg    *Config
	env    envs.Env // nil until needed, and after a failure
	jobs   chan int
	reply  chan Response
	events chan<- event
	quit   <-chan struct{}
}

func (w *worker) run() {
	defer w.discard()
	for ep := range w.jobs {
		t, err := w.episode(ep)
		if err != nil {
			return
		}
		w.events <- event{slot: w.slot, done: t}
	}
}

// episode plays one episode. Environment failures end up in the
// trajectory; the only error is errAborted.
func (w *worker) episode(ep int) (*Trajectory, error) {
	if w.env == nil {
		w.env = w.cfg.NewEnv()
	}
	env := w.env
	spec := env.Spec()
	start := w.cfg.start(ep)
	t := &Trajectory{Env: spec.Name, Split: start.Split, Seed: start.Seed, Sample: ep % max(w.cfg.Group, 1), Instruction: spec.Instruction, WholeReply: spec.WholeReply}
	maxSteps := w.cfg.StepLimit(spec)
	if maxSteps <= 0 {
		t.Error = fmt.Sprintf("environment %s declares no step limit (max_steps %d) and none was configured", spec.Name, spec.MaxSteps)
		return t, nil
	}

	if len(start.Actions) > maxSteps {
		t.Error = fmt.Sprintf("%d opening actions exceed the step limit of %d", len(start.Actions), maxSteps)
		return t, nil
	}
	release := func() { envs.Close(env) }
	obs, err := call(w.cfg.StepTimeout, w.quit, release, func() (string, error) { return env.Reset(start.Split, start.Seed) })
	if err != nil {
		return w.fail(t, fmt.Errorf("reset: %w", err))
	}
	t.Steps = make([]Step, 0, min(maxSteps, maxStepsHint))
	history := make([]chat.Message, 0, 2+2*min(maxSteps, maxStepsHint))
	history = append(history,
		chat.Message{Role: chat.System, Content: spec.Instruction},
		chat.Message{Role: chat.User, Content: obs})
	for len(t.Steps) < maxSteps {
		replayed := len(t.Steps) < len(start.Actions)
		var resp Response
		if replayed {
			resp.Text = start.Actions[len(t.Steps)]
		} else {
			// The events buffer has room for every worker's one pending
			// event, so this send never blocks; the coordinator closes
			// reply to abort.
			w.events <- event{slot: w.slot, req: Request{Env: spec.Name, Messages: history, Available: env.AvailableActions(), Instance: env, Slot: w.slot, Episode: ep}}
			var ok bool
			if resp, ok = <-w.reply; !ok {
				return nil, errAborted
			}
			if resp.ContextFull != nil {
				if len(t.Steps) == 0 {
					// Nothing to learn from or score: the task does not
					// fit this policy's context at all.
					t.Error = fmt.Sprintf("step 1: %v", resp.ContextFull)
					return t, nil
				}
				t.ContextFull = fmt.Sprintf("step %d: %v", len(t.Steps)+1, resp.ContextFull)
				break
			}
			if resp.Failed != nil {
				// The instance is sound; only this episode has no way on.
				t.NumSteps = len(t.Steps)
				t.Error = fmt.Sprintf("step %d: %v", len(t.Steps)+1, resp.Failed)
				return t, nil
			}
		}
		res, err := call(w.cfg.StepTimeout, w.quit, release, func() (envs.StepResult, error) { return env.Step(resp.Text) })
		if err != nil {
			return w.fail(t, fmt.Errorf("step %d: %w", len(t.Steps)+1, err))
		}
		t.Steps = append(t.Steps, Step{
			Observation:     obs,
			Action:          resp.Text,
			ParsedAction:    envs.ParseAction(resp.Text),
			PromptTokenIDs:  resp.PromptTokenIDs,
			DroppedMessages: resp.DroppedMessages,
			TokenIDs:        resp.TokenIDs,
			LogProbs:        resp.LogProbs,
			Reward:          res.Reward,
			Done:            res.Done,
			Info:            res.Info,
			Replayed:        replayed,
		})
		t.Return += res.Reward
		obs = res.Observation
		if res.Done {
			if len(t.Steps) < len(start.Actions) {
				return w.fail(t, fmt.Errorf("the episode ended at opening action %d of %d (is the environment deterministic?)", len(t.Steps), len(start.Actions)))
			}
			break
		}
		history = append(history,
			chat.Message{Role: chat.Assistant, Content: resp.Text},
			chat.Message{Role: chat.User, Content: obs})
	}
	t.NumSteps = len(t.Steps)
	last := t.Steps[len(t.Steps)-1]
	t.FinalObservation = obs
	t.Score = last.Info.Score
	t.Success = last.Info.Success
	t.Truncated = !last.Done
	return t, nil
}

// fail records an environment failure and discards the instance, whose
// state is unknown; the next episode gets a fresh one.
func (w *worker) fail(t *Trajectory, err error) (*Trajectory, error) {
	if errors.Is(err, errAborted) || errors.Is(err, errTimeout) {
		// call gave up on the instance while a goroutine still uses it:
		// forget it; call closes it once that goroutine is done.
		w.env = nil
	}
	if errors.Is(err, errAborted) {
		return nil, errAborted
	}
	t.NumSteps = len(t.Steps)
	t.Error = err.Error()
	w.discard()
	return t, nil
}

// discard closes the worker's instance, if it can be closed, and forgets
// it.
func (w *worker) discard() {
	envs.Close(w.env)
	w.env = nil
}

// errTimeout marks a Reset or Step that exceeded Config.StepTimeout.
var errTimeout = errors.New("timed out")

// call runs f, bounded by timeout (when positive) and by quit, so that
// neither a hung environment nor the end of the run can block a worker.
// When it gives up on f, f keeps running in the background with the
// instance: the caller then forgets the instance, and release, which
// closes it, runs once f has returned.
func call[T any](timeout time.Duration, quit <-chan struct{}, release func(), f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	var mu sync.Mutex
	returned, abandoned := false, false
	go func() {
		v, err := f()
		mu.Lock()
		returned = true
		gone := abandoned
		mu.Unlock()
		if gone {
			release()
			return
		}
		done <- result{v, err}
	}()
	var expired <-chan time.Time // nil: no timeout
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
	}
	var why error
	select {
	case r := <-done:
		return r.v, r.err
	case <-expired:
		why = fmt.Errorf("%w after %v", errTimeout, timeout)
	case <-quit:
		why = errAborted
	}
	mu.Lock()
	if returned { // f returned as the caller gave up: its result stands
		mu.Unlock()
		r := <-done
		return r.v, r.err
	}
	abandoned = true
	mu.Unlock()
	var zero T
	return zero, why
}
