package rollout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/agentrl/agentrl/envs"
)

// Step records one action and what followed. docs/trajectories.md
// documents the JSON form.
type Step struct {
	// Observation is what the agent saw before acting.
	Observation string `json:"observation"`
	// Action is the policy's raw text; ParsedAction is the action
	// envs.ParseAction extracts from it.
	Action       string `json:"action"`
	ParsedAction string `json:"parsed_action"`
	// PromptTokenIDs are the tokens a language-model policy saw (the
	// conversation rendered with the chat template), after it left out
	// DroppedMessages old messages to fit its context. TokenIDs and
	// LogProbs are the generated tokens with their log-probabilities
	// under the sampling model's raw distribution.
	PromptTokenIDs  []int32   `json:"prompt_token_ids,omitempty"`
	DroppedMessages int       `json:"dropped_messages,omitempty"`
	TokenIDs        []int32   `json:"token_ids,omitempty"`
	LogProbs        []float32 `json:"logprobs,omitempty"`
	Reward          float64   `json:"reward"`
	Done            bool      `json:"done"`
	Info            envs.Info `json:"info"`
	// Replayed marks an opening action the runner took for the policy
	// (Config.Starts).
	Replayed bool `json:"replayed,omitempty"`
}

// Trajectory is one episode.
type Trajectory struct {
	Env   string     `json:"env"`
	Split envs.Split `json:"split"`
	Seed  int64      `json:"seed"`
	// Sample numbers the episodes of one task in a group rollout (see
	// Config.Group); 0 otherwise.
	Sample int `json:"sample,omitempty"`
	// Instruction is the system prompt the policy was given, so that a
	// trajectory can be replayed as a conversation without the environment.
	Instruction string `json:"instruction"`
	// WholeReply is the environment's Spec.WholeReply: it read each
	// action's whole text, which its demonstrations keep.
	WholeReply bool   `json:"whole_reply,omitempty"`
	Steps      []Step `json:"steps"`
	// FinalObservation is the environment's answer to the last action,
	// which no policy saw.
	FinalObservation string `json:"final_observation"`
	// Return is the sum of the step rewards.
	Return float64 `json:"return"`
	// Score and Success are the environment's verdict on the last step.
	Score   float64 `json:"score"`
	Success bool    `json:"success"`
	// NumSteps equals len(Steps); it is stored for readers that skip steps.
	NumSteps int `json:"num_steps"`
	// Truncated is true when the episode hit the step limit before the
	// environment ended it, or ran out of the policy's context.
	Truncated bool `json:"truncated"`
	// ContextFull is set when the episode was truncated because its
	// conversation no longer fitted the policy's context, and says why.
	ContextFull string `json:"context_full,omitempty"`
	// Error is set when the environment failed (e.g. a remote server went
	// down) or the policy had no action for this episode's state
	// (Response.Failed); the steps before the failure are kept.
	Error string `json:"error,omitempty"`
}

// Validate checks the invariants a trajectory file must hold. Steps are
// numbered from 1 in its errors, as in the runner's.
func (t *Trajectory) Validate() error {
	if t.Env == "" {
		return errors.New("env is empty")
	}
	if _, err := envs.ParseSplit(string(t.Split)); err != nil {
		return err
	}
	if t.NumSteps != len(t.Steps) {
		return fmt.Errorf("num_steps is %d but there are %d steps", t.NumSteps, len(t.Steps))
	}
	sum := 0.0
	for i, s := range t.Steps {
		if s.TokenIDs != nil && s.LogProbs != nil && len(s.TokenIDs) != len(s.LogProbs) {
			return fmt.Errorf("step %d: %d token_ids but %d logprobs", i+1, len(s.TokenIDs), len(s.LogProbs))
		}
		if s.Done && i != len(t.Steps)-1 {
			return fmt.Errorf("step %d: done before the last step", i+1)
		}
		if math.IsNaN(s.Reward) || math.IsInf(s.Reward, 0) {
			return fmt.Errorf("step %d: reward is %v", i+1, s.Reward)
		}
		sum += s.Reward
	}
	if math.Abs(sum-t.Return) > 1e-6*max(1, math.Abs(sum)) {
		return fmt.Errorf("return is %v but the rewards sum to %v", t.Return, sum)
	}
	if t.Error == "" && len(t.Steps) > 0 && !t.Truncated && !t.Steps[len(t.Steps)-1].Done {
		return errors.New("last step is not done, yet the episode is neither truncated nor failed")
	}
	return nil
}

// Writer writes trajectories as JSON lines, one episode per line.
type Writer struct {
	w   *bufio.Writer
	enc *json.Encoder
}

// NewWriter returns a Writer to w; call Flush when done.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &Writer{w: bw, enc: enc}
}

// Write appends one trajectory.
func (w *Writer) Write(t *Trajectory) error {
	if err := w.enc.Encode(t); err != nil {
		return fmt.Errorf("write trajectory %s/%s/%d: %w", t.Env, t.Split, t.Seed, err)
	}
	return nil
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

// Reader reads a JSON-lines trajectory file, validating each line.
type Reader struct {
	r    *bufio.Reader
	line int
}

// NewReader returns a Reader from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReader(r)}
}

// Read returns the next trajectory, or io.EOF after the last. Errors name
// the line ("line 12: ..."). Blank lines are skipped.
func (r *Reader) Read() (Trajectory, error) {
	for {
		data, err := r.r.ReadBytes('\n')
		if len(data) == 0 && err != nil {
			if err == io.EOF {
				return Trajectory{}, io.EOF
			}
			return Trajectory{}, fmt.Errorf("line %d: %w", r.line+1, err)
		}
		r.line++
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		var t Trajectory
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return Trajectory{}, fmt.Errorf("line %d: %w", r.line, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return Trajectory{}, fmt.Errorf("line %d: unexpected data after the trajectory", r.line)
		}
		if err := t.Validate(); err != nil {
			return Trajectory{}, fmt.Errorf("line %d: %w", r.line, err)
		}
		return t, nil
	}
}

// ReadAll reads every trajectory from r.
func ReadAll(r io.Reader) ([]Trajectory, error) {
	tr := NewReader(r)
	var out []Trajectory
	for {
		t, err := tr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, t)
	}
}
