package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentrl/agentrl/envs"
)

// ServerOptions configures a Server.
type ServerOptions struct {
	// MaxInstances bounds the live instances; /create answers 503 beyond
	// it (default 256).
	MaxInstances int
	// MaxBodyBytes bounds a request body; larger ones get 413 (default
	// 1 MiB).
	MaxBodyBytes int64
	// DefaultSplit is used by resets that name no split, as AgentGym's
	// clients send (default test: they evaluate).
	DefaultSplit envs.Split
}

// Server serves an environment over the AgentGym protocol in the form
// Protocols["agentrl"] describes: ids in "id", the seed in "data_idx", the
// split in "split", and step answers that carry the full envs.Info. It
// also answers GET /spec with the environment's Spec. Each instance is
// used by one request at a time; different instances step in parallel.
type Server struct {
	newEnv func() envs.Env
	spec   envs.Spec
	opts   ServerOptions
	mux    *http.ServeMux

	mu        sync.Mutex
	nextID    int
	instances map[int]*instance
}

type instance struct {
	mu      sync.Mutex
	env     envs.Env
	obs     string
	started bool
	done    bool
}

// NewServer returns a server making instances with newEnv.
func NewServer(newEnv func() envs.Env, opts ServerOptions) *Server {
	if opts.MaxInstances <= 0 {
		opts.MaxInstances = 256
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.DefaultSplit == "" {
		opts.DefaultSplit = envs.Test
	}
	s := &Server{newEnv: newEnv, spec: envs.SpecOf(newEnv), opts: opts, instances: map[int]*instance{}}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, "agentrl environment server: "+s.spec.Name)
	})
	s.mux.HandleFunc("GET /spec", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.spec) })
	s.mux.HandleFunc("POST /create", s.create)
	s.mux.HandleFunc("POST /reset", s.reset)
	s.mux.HandleFunc("POST /step", s.step)
	s.mux.HandleFunc("GET /observation", s.observation)
	s.mux.HandleFunc("GET /available_actions", s.availableActions)
	s.mux.HandleFunc("POST /close", s.close)
	return s
}

// ServeHTTP answers one request. A panicking environment yields a 500
// answer rather than a dropped connection.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			slog.Error("environment server: panic", "path", r.URL.Path, "panic", v)
			writeError(w, http.StatusInternalServerError, fmt.Sprintf("environment panicked: %v", v))
		}
	}()
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	s.mux.ServeHTTP(w, r)
}

// Serve answers requests on ln until ctx ends, then stops accepting,
// lets the requests in progress finish (up to 10s) and closes the
// instances that implement io.Closer.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-served:
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(shutdown)
		cancel()
		<-served
	}
	s.closeAll()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, inst := range s.instances {
		if c, ok := inst.env.(io.Closer); ok {
			c.Close()
		}
		delete(s.instances, id)
	}
}

// Instances returns the number of live instances.
func (s *Server) Instances() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.instances)
}

func (s *Server) create(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	if len(s.instances) >= s.opts.MaxInstances {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("all %d instances are in use; close some (POST /close)", s.opts.MaxInstances))
		return
	}
	id := s.nextID
	s.nextID++
	inst := &instance{}
	s.instances[id] = inst
	s.mu.Unlock()
	// Making an environment may be slow; the instance is reserved but not
	// yet usable, so requests for it wait on its lock.
	inst.mu.Lock()
	inst.env = s.newEnv()
	inst.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]int{"id": id})
}

type resetRequest struct {
	ID      *int   `json:"id"`
	DataIdx int64  `json:"data_idx"`
	Split   string `json:"split"`
}

func (s *Server) reset(w http.ResponseWriter, r *http.Request) {
	var req resetRequest
	if !decode(w, r, &req) {
		return
	}
	split := s.opts.DefaultSplit
	if req.Split != "" {
		var err error
		if split, err = envs.ParseSplit(req.Split); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	if len(s.spec.Splits) > 0 && !slices.Contains(s.spec.Splits, split) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s has no %s split", s.spec.Name, split))
		return
	}
	inst, ok := s.lookup(w, req.ID)
	if !ok {
		return
	}
	inst.mu.Lock()
	defer inst.mu.Unlock()
	obs, err := inst.env.Reset(split, req.DataIdx)
	if err != nil {
		inst.started = false
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("reset: %v", err))
		return
	}
	inst.obs, inst.started, inst.done = obs, true, false
	writeJSON(w, http.StatusOK, map[string]any{
		"id":                *req.ID,
		"observation":       obs,
		"available_actions": inst.env.AvailableActions(),
	})
}

type stepRequest struct {
	ID     *int    `json:"id"`
	Action *string `json:"action"`
}

// stepAnswerJSON is /step's answer.
type stepAnswerJSON struct {
	Observation      string    `json:"observation"`
	Reward           float64   `json:"reward"`
	Done             bool      `json:"done"`
	Info             envs.Info `json:"info"`
	AvailableActions []string  `json:"available_actions"`
}

func (s *Server) step(w http.ResponseWriter, r *http.Request) {
	var req stepRequest
	if !decode(w, r, &req) {
		return
	}
	if req.Action == nil {
		writeError(w, http.StatusBadRequest, "missing action")
		return
	}
	inst, ok := s.lookup(w, req.ID)
	if !ok {
		return
	}
	inst.mu.Lock()
	defer inst.mu.Unlock()
	switch {
	case !inst.started:
		writeError(w, http.StatusConflict, "no episode in progress; reset first")
		return
	case inst.done:
		writeError(w, http.StatusConflict, "the episode is over; reset first")
		return
	}
	res, err := inst.env.Step(*req.Action)
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("step: %v", err))
		return
	}
	inst.obs, inst.done = res.Observation, res.Done
	ans := stepAnswerJSON{Observation: res.Observation, Reward: res.Reward, Done: res.Done, Info: res.Info}
	if !res.Done {
		ans.AvailableActions = inst.env.AvailableActions()
	}
	writeJSON(w, http.StatusOK, ans)
}

func (s *Server) observation(w http.ResponseWriter, r *http.Request) {
	inst, ok := s.lookupQuery(w, r)
	if !ok {
		return
	}
	inst.mu.Lock()
	defer inst.mu.Unlock()
	writeJSON(w, http.StatusOK, inst.obs)
}

func (s *Server) availableActions(w http.ResponseWriter, r *http.Request) {
	inst, ok := s.lookupQuery(w, r)
	if !ok {
		return
	}
	inst.mu.Lock()
	defer inst.mu.Unlock()
	var actions []string
	if inst.started && !inst.done {
		actions = inst.env.AvailableActions()
	}
	writeJSON(w, http.StatusOK, actions)
}

func (s *Server) close(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID *int `json:"id"`
	}
	if !decode(w, r, &req) {
		return
	}
	inst, ok := s.lookup(w, req.ID)
	if !ok {
		return
	}
	s.mu.Lock()
	delete(s.instances, *req.ID)
	s.mu.Unlock()
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if c, ok := inst.env.(io.Closer); ok {
		c.Close()
	}
	writeJSON(w, http.StatusOK, map[string]bool{"closed": true})
}

// lookup finds an instance by id, answering 400 when there is none.
func (s *Server) lookup(w http.ResponseWriter, id *int) (*instance, bool) {
	if id == nil {
		writeError(w, http.StatusBadRequest, "missing id")
		return nil, false
	}
	s.mu.Lock()
	inst, ok := s.instances[*id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown instance id %d (create one with POST /create)", *id))
		return nil, false
	}
	return inst, true
}

func (s *Server) lookupQuery(w http.ResponseWriter, r *http.Request) (*instance, bool) {
	id, err := strconv.Atoi(r.URL.Query().Get("id"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "missing or malformed id query parameter")
		return nil, false
	}
	return s.lookup(w, &id)
}

// decode reads a JSON request body into v, answering 400 or 413 on
// failure.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	err := json.NewDecoder(r.Body).Decode(v)
	if err == nil {
		return true
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", tooBig.Limit))
		return false
	}
	writeError(w, http.StatusBadRequest, fmt.Sprintf("malformed JSON body: %v", err))
	return false
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
