package nlac

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/llm"
	"github.com/agentrl/agentrl/llm/train"
	"github.com/agentrl/agentrl/rl"
	"github.com/agentrl/agentrl/rollout"
)

// warmup teaches the critic's adapter its roles from the environment's
// ground truth before the first iteration: the actor and the expert play
// nlac.warmup.tasks train tasks, and every step of their episodes gives
//   - the successor model: the description of what really followed;
//   - the merge (merge: prompt): what happened next and the real future
//     from the next step, merged into the real future from this one;
//   - the evaluator: a critique from the true outcome, judged optimal
//     exactly when the action is the expert's in that state;
//   - the refinement (for the actions that are not): the expert's action.
//
// With nlac.warmup.branches, the actor also plays on from each of their
// states, and the actions it takes there that no episode took join them
// (see branch): a warm-started actor mostly acts as the expert does, and
// the evaluator needs to see the actions it takes otherwise. With
// nlac.warmup.expert_branches the expert does the same (see
// expertBranch): the successor model then sees, in the actor's states,
// the expert's action and where it leads.
//
// A model that already plays the roles (a larger instruction-tuned one)
// does not need it: nlac.warmup.tasks=0.
//
// The warm-up takes as long as several iterations on a small machine, so
// it is committed as iteration 0's checkpoint (with the critic's target)
// and its metrics kept in a file: a run stopped after it resumes with the
// warmed-up critic and reports the warm-up in iteration 1's metrics. A run
// stopped during it keeps the collected examples (warmupData) and the
// fine-tuning's own checkpoint (rl.Run.FineTune), and goes on from there.
func (l *loop) warmup(ctx context.Context, it int) error {
	r, w := l.r, l.cfg.Warmup
	m := r.Metrics()
	if r.State.Prepared {
		if err := readJSON(l.warmupMetricsFile(), m); err != nil {
			return err
		}
		m.Loss = 0 // the iteration's loss is the actor's, set when it trains
		return nil
	}
	c, seqs, err := l.warmupData(ctx, it)
	if err != nil {
		return err
	}
	l.roleExamples = seqs
	if err := r.Trainer.UseAdapter(l.critic); err != nil {
		return err
	}
	err = r.FineTune(ctx, "critic warm-up", seqs, rl.SFTConfig{Epochs: w.Epochs, LR: w.LR, BatchTokens: w.BatchTokens}, it)
	if uerr := r.Trainer.UseAdapter(rl.ActorAdapter); err == nil {
		err = uerr
	}
	if err != nil {
		return err
	}
	warmupLoss := m.Loss
	m.Losses["warmup"], m.Loss = warmupLoss, 0
	delete(m.Losses, "sft")
	m.Metrics["warmup_sequences"] = float64(len(seqs))
	m.Metrics["warmup_optimal"] = share(c.Optimal, c.Transitions)
	if c.Branches > 0 {
		m.Metrics["warmup_branch_actions"] = float64(c.BranchActions)
	}
	if c.ExpertBranches > 0 {
		m.Metrics["warmup_expert_branch_actions"] = float64(c.ExpertBranchActions)
	}
	r.EndPhase("warmup")
	// The target starts from the warmed-up critic.
	if err := r.Trainer.UseAdapter(l.critic); err != nil {
		return err
	}
	l.target = r.Trainer.NewEMA()
	if err := r.Trainer.UseAdapter(rl.ActorAdapter); err != nil {
		return err
	}
	if err := l.handOver(ctx); err != nil {
		return err
	}
	if err := writeJSON(l.warmupMetricsFile(), m); err != nil {
		return err
	}
	if err := l.save(0); err != nil {
		return err
	}
	// The role model's environment steps (its replays and branches) go
	// into the state the preparation commits: a run resumed after it does
	// not play them again.
	r.State.EnvSteps += l.roles.envSteps
	l.roles.envSteps = 0
	if err := r.CommitPreparation(); err != nil {
		return err
	}
	r.Logf("warm-up: %d transitions of %d agent and %d expert episodes (%.2f of the actions the expert's, %.2f in successful episodes) gave %d role examples; loss %.4f",
		c.Transitions, c.Agent, c.Expert, share(c.Optimal, c.Transitions), share(c.Succeeded, c.Transitions), len(seqs), warmupLoss)
	return nil
}

// warmupForesight scores the warmed-up successor model on the first
// batch, before any backup: its mean p(success) for the actions taken and
// its AUC between those of successful and failed episodes, as
// warmup_successor_p_success and warmup_successor_auc_by_outcome. The
// iterations' own measurements come after the critic's updates, and
// cannot tell whether the warm-up taught the successor model to rank
// actions and the backup undid it, or it never did.
func (l *loop) warmupForesight(ctx context.Context, recs []Record, m *rl.Metrics) error {
	open := make([]int, len(recs))
	current := make([]string, len(recs))
	for i := range recs {
		open[i], current[i] = i, recs[i].Action
	}
	p, err := l.roles.foresee(ctx, recs, open, current)
	if err != nil {
		return err
	}
	if len(p) == 0 {
		return nil
	}
	var f Foresight
	for i := range recs { // in order: the mean's sum is the same in every run
		if ps, ok := p[i]; ok {
			f.add(ps, recs[i].T.Episode.Trajectory.Success)
		}
	}
	f.addTo(m, "warmup_successor_")
	l.r.Logf("warm-up: before any backup, on the first batch's actions, %s", f.note())
	return nil
}

// warmupCollection is what the warm-up's episodes were, kept with the
// role examples they gave.
type warmupCollection struct {
	Agent       int `json:"agent_episodes"`
	Expert      int `json:"expert_episodes"`
	Transitions int `json:"transitions"`
	Optimal     int `json:"optimal"` // actions that were the expert's
	// Succeeded counts the transitions of successful episodes.
	Succeeded int `json:"succeeded"`
	// Branches are the episodes branched from the warm-up's states, and
	// BranchActions the new actions they gave (part of Transitions).
	Branches      int `json:"branches,omitempty"`
	BranchActions int `json:"branch_actions,omitempty"`
	// ExpertBranches are the expert's episodes from the same states, and
	// ExpertBranchActions the new actions they gave (part of Transitions).
	ExpertBranches      int   `json:"expert_branches,omitempty"`
	ExpertBranchActions int   `json:"expert_branch_actions,omitempty"`
	EnvSteps            int64 `json:"env_steps"`
}

// branches are the warm-up's branch episodes (nlac.warmup.branches and
// expert_branches): from how many distinct states they were played, how
// many finished and failed, and the transitions of the new actions they
// took there.
type branches struct {
	States, Played, Failed int
	Transitions            []Transition
}

// branch plays the actor on from each distinct state of ts (a task and
// the actions that led there) nlac.warmup.branches times, sampling at
// nlac.warmup.branch_temperature, and keeps the new actions those
// episodes took in the state (see keepNew).
func (m *roleModel) branch(ctx context.Context, ts []Transition, seed uint64) (branches, error) {
	w := m.cfg.Warmup
	starts, taken := statesOf(ts)
	s := rollout.DefaultActionSampling()
	s.MaxTokens, s.Temperature, s.Seed = m.actionTokens, float32(w.BranchTemperature), int64(seed>>1)
	snap := m.actor
	snap.Sampling = s
	trajs, _, err := m.collector.Collect(ctx, snap, rl.Episodes{Starts: starts, Group: w.Branches, MaxSteps: m.maxSteps, StepTimeout: m.stepTimeout})
	if err != nil {
		return branches{}, fmt.Errorf("warm-up branches: %w", err)
	}
	if len(trajs) != len(starts)*w.Branches {
		return branches{}, fmt.Errorf("warm-up branches: %d episodes for %d states x %d", len(trajs), len(starts), w.Branches)
	}
	return m.keepNew(starts, w.Branches, trajs, taken), nil
}

// expertBranch plays the environment's expert on from each distinct state
// of ts (nlac.warmup.expert_branches) and keeps its action there where no
// transition of ts took it (see keepNew), told with what followed when
// the expert played on. The actor's failed episodes then have, in their
// own states, an action whose future succeeds beside the one that failed:
// without it a successor model sees one action per state and learns the
// state's outcome rather than the action's. A state in which the expert
// fails (an error of its own or of the environment) is counted and left
// out.
func (m *roleModel) expertBranch(ctx context.Context, ts []Transition) (branches, error) {
	starts, taken := statesOf(ts)
	if len(starts) == 0 {
		return branches{}, nil
	}
	trajs, err := rollout.Run(ctx, rollout.Config{
		NewEnv: m.newEnv, Episodes: len(starts), Starts: starts, MaxSteps: m.maxSteps, StepTimeout: m.stepTimeout,
	}, rollout.Expert())
	if err != nil {
		return branches{}, fmt.Errorf("warm-up expert branches: %w", err)
	}
	return m.keepNew(starts, 1, trajs, taken), nil
}

// withoutFailures drops the episodes that failed (Trajectory.Error): their
// steps lead to no outcome to describe.
func withoutFailures(trajs []rollout.Trajectory) []rollout.Trajectory {
	var out []rollout.Trajectory
	for _, t := range trajs {
		if t.Error == "" {
			out = append(out, t)
		}
	}
	return out
}

// statesOf gives the distinct states of ts in order of first appearance,
// as starts, and the actions taken in each (by state key).
func statesOf(ts []Transition) ([]rollout.Start, map[string][]string) {
	taken := map[string][]string{}
	var starts []rollout.Start
	for _, t := range ts {
		st := stateOf(t)
		key := stateKey(st)
		if _, seen := taken[key]; !seen {
			starts = append(starts, st)
		}
		taken[key] = append(taken[key], t.step().Action)
	}
	return starts, taken
}

// keepNew keeps, of the episodes played from starts (group after group),
// the transitions of the actions they took in their start state that no
// one took there yet (as the environment compares actions, and marking
// each as taken): each is then told with the future that really followed
// it. An episode the environment fails is counted and left out; all
// played steps count as the warm-up's environment steps.
func (m *roleModel) keepNew(starts []rollout.Start, group int, trajs []rollout.Trajectory, taken map[string][]string) branches {
	env := m.newEnv()
	defer envs.Close(env)
	b := branches{States: len(starts)}
	for e := range trajs {
		tr := &trajs[e]
		m.envSteps += int64(len(tr.Steps))
		st := starts[e/group]
		step := len(st.Actions)
		if tr.Error != "" || step >= len(tr.Steps) {
			b.Failed++
			continue
		}
		b.Played++
		key := stateKey(st)
		action := tr.Steps[step].Action
		if slices.ContainsFunc(taken[key], func(a string) bool { return envs.Equivalent(env, a, action) }) {
			continue
		}
		taken[key] = append(taken[key], action)
		b.Transitions = append(b.Transitions, Transition{Episode: &Episode{Trajectory: *tr}, Step: step})
	}
	return b
}

// stateOf is the start that reaches the state of transition t: its task
// and the actions before it.
func stateOf(t Transition) rollout.Start {
	tr := &t.Episode.Trajectory
	st := rollout.Start{Split: tr.Split, Seed: tr.Seed, Actions: make([]string, t.Step)}
	for i := range t.Step {
		st.Actions[i] = tr.Steps[i].Action
	}
	return st
}

// stateKey identifies a start's state: environments are deterministic
// given split and seed, so the same actions reach the same state.
func stateKey(st rollout.Start) string {
	return fmt.Sprintf("%s\x00%d\x00%s", st.Split, st.Seed, strings.Join(st.Actions, "\x00"))
}

// warmupData plays the warm-up's episodes and makes its role examples,
// or reads them back when an earlier attempt of the run did so: the
// sampled episodes need not come out the same twice, and the critic's
// fine-tuning goes on from its checkpoint only on the same data.
func (l *loop) warmupData(ctx context.Context, it int) (warmupCollection, []train.Sequence, error) {
	r, w := l.r, l.cfg.Warmup
	var c warmupCollection
	if err := readJSON(l.warmupDataFile(), &c); err == nil {
		seqs, err := loadSequences(l.warmupFile())
		if err != nil {
			return c, nil, err
		}
		r.State.EnvSteps += c.EnvSteps
		r.Logf("warm-up: the %d role examples an earlier attempt made", len(seqs))
		return c, seqs, nil
	}
	// The episodes and the replays that find the expert's actions, as
	// counted by the run and by the role model.
	before := r.State.EnvSteps + l.roles.envSteps
	seed0 := r.TaskSeed0(0, w.Tasks) // tasks no iteration plays
	s := llm.DefaultSampling()
	s.MaxTokens, s.Temperature, s.Seed = r.Config.Rollout.MaxTokens, float32(r.Config.Rollout.Temperature), int64(r.IterSeed(it, seedWarmup)>>1)
	agent, _, err := r.Collector().Collect(ctx, r.ActorSnapshot(s), rl.Episodes{
		Split: envs.Train, Seed0: seed0, Tasks: w.Tasks, Group: 1, MaxSteps: r.Config.Rollout.MaxSteps,
	})
	if err != nil {
		return c, nil, err
	}
	for _, t := range agent {
		r.State.EnvSteps += int64(len(t.Steps))
	}
	expert, err := r.ExpertEpisodes(ctx, seed0, w.Tasks)
	if err != nil {
		return c, nil, err
	}
	played := append(agent, expert...)
	agent, expert = withoutFailures(agent), withoutFailures(expert)
	if failed := len(played) - len(agent) - len(expert); failed == len(played) {
		return c, nil, fmt.Errorf("warm-up: every one of its %d episodes failed; the first: %s", len(played), played[0].Error)
	} else if failed > 0 {
		r.Logf("warm-up: %d of its %d episodes failed and are left out", failed, len(played))
	}
	ts := transitionsOf(episodesOf(0, append(agent, expert...)))
	if w.ExpertBranches {
		b, err := l.roles.expertBranch(ctx, ts)
		if err != nil {
			return c, nil, err
		}
		r.Logf("warm-up: the expert, playing on from %d states, took %d actions no episode had taken there (%d of its episodes failed)",
			b.States, len(b.Transitions), b.Failed)
		ts = append(ts, b.Transitions...)
		c.ExpertBranches, c.ExpertBranchActions = b.Played, len(b.Transitions)
	}
	if w.Branches > 0 {
		b, err := l.roles.branch(ctx, ts, r.IterSeed(it, seedWarmupBranch))
		if err != nil {
			return c, nil, err
		}
		r.Logf("warm-up: %d branches from %d states took %d actions no episode had taken there (%d branches failed)",
			b.Played, b.States, len(b.Transitions), b.Failed)
		ts = append(ts, b.Transitions...)
		c.Branches, c.BranchActions = b.Played, len(b.Transitions)
	}
	seqs, optimal, err := l.roles.warmupSequences(ctx, ts)
	if err != nil {
		return c, nil, err
	}
	r.EndPhase("rollout")
	c.Agent, c.Expert, c.Transitions, c.Optimal = len(agent), len(expert), len(ts), optimal
	for _, t := range ts {
		if t.Episode.Trajectory.Success {
			c.Succeeded++
		}
	}
	c.EnvSteps = r.State.EnvSteps + l.roles.envSteps - before
	// Kept for the critic updates to replay (the file for a resumed run),
	// and the tallies after it: their file says the examples are whole.
	if err := saveSequences(l.warmupFile(), seqs); err != nil {
		return c, nil, err
	}
	if err := writeJSON(l.warmupDataFile(), c); err != nil {
		return c, nil, err
	}
	r.Logf("warm-up: %d role examples from %d agent and %d expert episodes; fine-tuning the critic",
		len(seqs), c.Agent, c.Expert)
	return c, seqs, nil
}

// warmupSequences are the role examples of the transitions (see warmup),
// each within the context, and how many actions were the expert's.
func (m *roleModel) warmupSequences(ctx context.Context, ts []Transition) ([]train.Sequence, int, error) {
	experts, replayed, err := m.expertActions(ctx, ts)
	m.envSteps += replayed // the warm-up learns from them
	if err != nil {
		return nil, 0, fmt.Errorf("%w; the warm-up needs one (set nlac.warmup.tasks=0 to go without)", err)
	}
	env := m.newEnv()
	defer envs.Close(env)
	byRole := map[string][]train.Sequence{}
	// The examples of the roles to balance, kept apart by side: the
	// evaluator's by judgement (suboptimal, optimal), the successor
	// model's by the outcome of the episode they describe (failure,
	// success).
	sides := map[string]*[2][]train.Sequence{}
	if m.cfg.Warmup.Balance {
		sides[roleEvaluator] = &[2][]train.Sequence{}
	}
	if m.cfg.Warmup.BalanceOutcomes {
		sides[roleSuccessor] = &[2][]train.Sequence{}
	}
	add := func(role string, msgs []chat.Message, target string, side bool) error {
		s, ok, err := m.sequence(msgs, target)
		switch {
		case err != nil || !ok:
		case sides[role] != nil:
			sides[role][b2i(side)] = append(sides[role][b2i(side)], s)
		default:
			byRole[role] = append(byRole[role], s)
		}
		return err
	}
	// Only the roles the method plays: the ablations without a successor
	// model need no futures, NLQL no refinement.
	successor := m.cfg.Method == "nlac" || m.cfg.Method == "nlql"
	optimal := 0
	for i, t := range ts {
		a := t.action()
		future := m.form().trueFuture(t)
		good := envs.Equivalent(env, t.step().Action, experts[i])
		if good {
			optimal++
		}
		// Judged by the outcome, the critique says nothing of the
		// expert: with a comment between the outcome and the verdict, a
		// small evaluator learnt the verdict from the comment ("An expert
		// acts the same" after a predicted failure, then "optimal").
		judged, comment := good, expertComment(experts[i], good)
		if m.cfg.Warmup.Judge == "outcome" {
			judged, comment = t.Episode.Trajectory.Success, ""
		}
		critique := groundCritique(future, comment, judged)
		examples := []roleExample{{roleEvaluator, func(d *promptData) { d.Futures = []string{future} }, critique}}
		if successor {
			examples = append(examples, roleExample{roleSuccessor, nil, future})
		}
		// The refinement learns from the critiques it will be given,
		// those judged suboptimal, and only where the expert's action is
		// another: judged by the outcome, an action other than the
		// expert's may be approved, and the expert's own condemned.
		if !judged && !good && m.cfg.Method != "nlql" {
			examples = append(examples, roleExample{roleRefine, func(d *promptData) { d.Critique = critique }, experts[i]})
		}
		if successor && m.cfg.Merge == "prompt" && !t.Done() {
			after := Transition{Episode: t.Episode, Step: t.Step + 1}
			nextAction := after.action()
			examples = append(examples, roleExample{roleMerge, mergeData(t, nextAction, m.form().trueFuture(after)), future})
		}
		for _, ex := range examples {
			target, err := m.model.Tokenize(ex.target, false, false)
			if err != nil {
				return nil, 0, err
			}
			msgs, _, err := m.prompt(ex.role, t, a, ex.fill, len(target)+8)
			if errors.Is(err, errTooLong) {
				continue
			}
			if err != nil {
				return nil, 0, err
			}
			side := judged
			if ex.role == roleSuccessor {
				side = t.Episode.Trajectory.Success
			}
			if err := add(ex.role, msgs, ex.target, side); err != nil {
				return nil, 0, err
			}
		}
	}
	for role, split := range sides {
		byRole[role] = balanced(split[0], split[1])
	}
	// Each role gets as many examples as the most frequent one, by
	// repetition: the refinement, which only the actions that are not the
	// expert's teach, is learnt as well as the successor model.
	most := 0
	for _, ex := range byRole {
		most = max(most, len(ex))
	}
	if most == 0 {
		return nil, 0, fmt.Errorf("no role example fits the context of %d tokens", m.context)
	}
	var seqs []train.Sequence
	for _, role := range roles {
		ex := byRole[role]
		for i := 0; len(ex) > 0 && i < most; i++ {
			seqs = append(seqs, ex[i%len(ex)])
		}
	}
	return seqs, optimal, nil
}

// balanced interleaves a and b, repeating the shorter up to the longer's
// length; with either empty there is nothing to balance and both come back
// as they are.
func balanced(a, b []train.Sequence) []train.Sequence {
	if len(a) == 0 || len(b) == 0 {
		return append(append([]train.Sequence(nil), a...), b...)
	}
	n := max(len(a), len(b))
	out := make([]train.Sequence, 0, 2*n)
	for i := range n {
		out = append(out, a[i%len(a)], b[i%len(b)])
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// roleExample is a role's prompt for a transition (the fill of its
// template) and the answer to teach.
type roleExample struct {
	role   string
	fill   func(*promptData)
	target string
}

// groundCritique is the critique the warm-up teaches, short for small
// models: how the episode ended (the outcome line of future), the comment,
// and the judgement.
func groundCritique(future, comment string, optimal bool) string {
	outcome, _, _ := splitOutcome(future)
	judgement := "suboptimal"
	if optimal {
		judgement = "optimal"
	}
	return fmt.Sprintf("%s%s\nJudgement: %s", outcome, comment, judgement)
}

// The warm-up's comments on an action: the expert takes it too, or the
// expert's action follows expertDiffers.
const (
	expertAgrees  = " An expert acts the same."
	expertDiffers = " An expert would do:"
)

// expertComment says whether the action is what the expert does there
// (asExpert) and, if not, what the expert does.
func expertComment(expert string, asExpert bool) string {
	if asExpert {
		return expertAgrees
	}
	return expertDiffers + " " + expert
}

// warmupFile keeps the warm-up's role examples.
func (l *loop) warmupFile() string { return filepath.Join(l.r.Dir, "nlac", "warmup.jsonl.gz") }

// warmupDataFile keeps the tallies of the episodes the role examples
// came from.
func (l *loop) warmupDataFile() string { return filepath.Join(l.r.Dir, "nlac", "warmup-data.json") }

// warmupMetricsFile keeps the warm-up's metrics for iteration 1's line.
func (l *loop) warmupMetricsFile() string {
	return filepath.Join(l.r.Dir, "nlac", "warmup-metrics.json")
}

// saveSequences writes training sequences as gzipped JSON lines,
// atomically.
func saveSequences(path string, seqs []train.Sequence) error {
	if err := writeJSONLines(path, seqs); err != nil {
		return fmt.Errorf("warm-up examples: %w", err)
	}
	return nil
}

// loadSequences reads what saveSequences wrote.
func loadSequences(path string) ([]train.Sequence, error) {
	seqs, err := readJSONLines(path, func(s *train.Sequence) error {
		if len(s.Tokens) == 0 || len(s.Weights) != len(s.Tokens) {
			return fmt.Errorf("%d tokens and %d weights", len(s.Tokens), len(s.Weights))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("warm-up examples: %w", err)
	}
	return seqs, nil
}
