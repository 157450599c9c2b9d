package nlac

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/agentrl/agentrl/chat"
	"github.com/agentrl/agentrl/envs"
)

// The roles the critic's prompts serve; each has a template file
// ROLE.tmpl defining "system" and "user".
const (
	roleSuccessor = "successor"
	roleMerge     = "merge"
	roleEvaluator = "evaluator"
	roleRefine    = "refine"
)

var roles = []string{roleSuccessor, roleMerge, roleEvaluator, roleRefine}

//go:embed prompts/*.tmpl
var builtinPrompts embed.FS

// Prompts are the role templates: the built-in ones, each replaced by a
// file of the same name in a user's directory.
type Prompts struct {
	byRole map[string]*template.Template
}

// LoadPrompts reads the templates; dir (may be "") holds replacements
// ROLE.tmpl for any of the roles. A file there that names no role is an
// error, so that a misspelt name does not go unnoticed.
func LoadPrompts(dir string) (*Prompts, error) {
	p := &Prompts{byRole: map[string]*template.Template{}}
	funcs := template.FuncMap{"inc": func(i int) int { return i + 1 }}
	for _, role := range roles {
		name := role + ".tmpl"
		text, err := builtinPrompts.ReadFile("prompts/" + name)
		source := "built-in " + name
		if dir != "" {
			path := filepath.Join(dir, name)
			if user, uerr := os.ReadFile(path); uerr == nil {
				text, source = user, path
			} else if !errors.Is(uerr, fs.ErrNotExist) {
				return nil, fmt.Errorf("nlac.prompts: %w", uerr)
			}
		}
		if err != nil {
			return nil, err
		}
		t, err := template.New(role).Funcs(funcs).Option("missingkey=error").Parse(string(text))
		if err != nil {
			return nil, fmt.Errorf("prompt template %s: %w", source, err)
		}
		for _, part := range []string{"system", "user"} {
			if t.Lookup(part) == nil {
				return nil, fmt.Errorf("prompt template %s: no {{define %q}} section", source, part)
			}
			// A misspelt field ({{.Futurs}}) parses; it fails when run,
			// which must be now, not after a warm-up's episodes.
			if err := t.ExecuteTemplate(io.Discard, part, promptData{Futures: []string{"a future"}}); err != nil {
				return nil, fmt.Errorf("prompt template %s: %w", source, err)
			}
		}
		p.byRole[role] = t
	}
	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("nlac.prompts: %w", err)
		}
		for _, e := range entries {
			role, ok := strings.CutSuffix(e.Name(), ".tmpl")
			if ok && p.byRole[role] == nil {
				return nil, fmt.Errorf("nlac.prompts: %s names no role (want %s.tmpl)", filepath.Join(dir, e.Name()), strings.Join(roles, ".tmpl, "))
			}
		}
	}
	return p, nil
}

// promptData is what a template can show. History is the episode up to
// the current observation as text (see transcript); Action is the action
// judged; the rest is filled for the roles that use it.
type promptData struct {
	Instruction string
	History     string
	Action      string
	// WholeReply: the environment reads the whole reply (actionText), so
	// a refinement is a whole reply, not one "Action:" line.
	WholeReply bool
	// OutcomeFirst: futures state the outcome on their first line
	// (nlac.outcome_first), else on their last.
	OutcomeFirst bool
	// Merge: what really followed and the bootstrapped prediction.
	NextObservation string
	Reward          float64
	NextAction      string
	NextFuture      string
	// Evaluator: the sampled futures.
	Futures []string
	// Refine: the critique.
	Critique string
}

// render gives a role's conversation: its system and user messages.
func (p *Prompts) render(role string, d promptData) ([]chat.Message, error) {
	t := p.byRole[role]
	var sys, user strings.Builder
	if err := t.ExecuteTemplate(&sys, "system", d); err != nil {
		return nil, fmt.Errorf("prompt %s: %w", role, err)
	}
	if err := t.ExecuteTemplate(&user, "user", d); err != nil {
		return nil, fmt.Errorf("prompt %s: %w", role, err)
	}
	return []chat.Message{
		{Role: chat.System, Content: strings.TrimSpace(sys.String())},
		{Role: chat.User, Content: strings.TrimSpace(user.String())},
	}, nil
}

// view is how much of an episode a prompt shows; prompts that do not fit
// the context retry with the next, smaller view.
type view struct {
	steps            int // latest steps shown before the current one
	instructionChars int
	observationChars int
}

// views are the prompt sizes tried in turn, from the configured history
// down to the task and the current observation.
func views(historySteps int) []view {
	return []view{
		{historySteps, 4000, 600},
		{min(historySteps, 2), 1500, 400},
		{1, 600, 300},
		{0, 300, 200},
	}
}

// transcript writes the episode's state before step t: the first
// observation (the task), the latest v.steps steps before t, and the
// observation at t.
func transcript(e *Episode, t int, v view) string {
	steps := e.Trajectory.Steps
	var b strings.Builder
	fmt.Fprintf(&b, "Observation 1: %s\n", clip(steps[0].Observation, v.observationChars))
	start := max(0, t-v.steps)
	if start > 0 {
		fmt.Fprintf(&b, "(actions 1 to %d and what followed them left out)\n", start)
	}
	for i := start; i < t; i++ {
		if i > 0 {
			fmt.Fprintf(&b, "Observation %d: %s\n", i+1, clip(steps[i].Observation, v.observationChars))
		}
		fmt.Fprintf(&b, "Action %d: %s\n", i+1, Transition{Episode: e, Step: i}.action())
	}
	if t > 0 {
		fmt.Fprintf(&b, "Observation %d: %s\n", t+1, clip(steps[t].Observation, v.observationChars))
	}
	return b.String()
}

// actionText is an action as the roles see it and the actor learns it:
// the parsed action in the one-line format the environments ask for, or
// the raw text when nothing parsed. Where the environment reads the whole
// reply (Spec.WholeReply: math's worked solutions, graded with their
// answer), it is the whole reply: its last line alone would teach the
// actor to drop its working.
func actionText(wholeReply bool, parsed, raw string) string {
	if wholeReply {
		return strings.TrimSpace(raw)
	}
	if parsed != "" {
		return "Action: " + parsed
	}
	return clip(raw, 200)
}

// textAction is actionText for a text the actor or the expert wrote.
func textAction(wholeReply bool, text string) string {
	return actionText(wholeReply, envs.ParseAction(text), text)
}

// clip shortens s to at most n characters, marking the cut.
func clip(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + " [...]"
}

// actionOf is the action a text the refinement wrote holds, as
// actionText gives it, "" when it holds none.
func actionOf(wholeReply bool, text string) string {
	if envs.ParseAction(text) == "" {
		return ""
	}
	return textAction(wholeReply, text)
}
