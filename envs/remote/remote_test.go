package remote_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/remote"
	"github.com/agentrl/agentrl/rollout"
	"github.com/agentrl/agentrl/rollout/rollouttest"
)

func newGuess() envs.Env { return rollouttest.New() }

// serve starts agentrl's server for the guess game on a loopback port.
func serve(t *testing.T, opts remote.ServerOptions) (*remote.Server, string) {
	t.Helper()
	srv := remote.NewServer(newGuess, opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return srv, ts.URL
}

func connect(t *testing.T, url string, opts remote.Options) *remote.Client {
	t.Helper()
	c, err := remote.Connect(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRemoteTrajectoriesEqualDirectOnes(t *testing.T) {
	srv, url := serve(t, remote.ServerOptions{})
	client := connect(t, url, remote.Options{})
	if !reflect.DeepEqual(client.Spec(), rollouttest.New().Spec()) {
		t.Fatalf("spec over HTTP differs: %+v", client.Spec())
	}
	for _, split := range envs.Splits {
		cfg := rollout.Config{NewEnv: newGuess, Parallel: 4, Episodes: 24, Split: split, Seed0: 50}
		direct, err := rollout.Run(context.Background(), cfg, rollout.NewRandom(9))
		if err != nil {
			t.Fatal(err)
		}
		cfg.NewEnv = client.NewEnv
		viaHTTP, err := rollout.Run(context.Background(), cfg, rollout.NewRandom(9))
		if err != nil {
			t.Fatal(err)
		}
		if len(direct) != cfg.Episodes || len(viaHTTP) != cfg.Episodes {
			t.Fatalf("%s: %d direct and %d remote episodes, want %d", split, len(direct), len(viaHTTP), cfg.Episodes)
		}
		for i := range direct {
			if !reflect.DeepEqual(direct[i], viaHTTP[i]) {
				t.Fatalf("%s seed %d differs:\ndirect %+v\nremote %+v", split, direct[i].Seed, direct[i], viaHTTP[i])
			}
		}
		if s := rollout.Summarize(viaHTTP); s.Errors != 0 || s.SuccessRate == 0 {
			t.Fatalf("%s: summary %+v", split, s)
		}
	}
	// The runner closed its instances at the end of each run.
	if n := srv.Instances(); n != 0 {
		t.Fatalf("%d instances left on the server", n)
	}
}

func TestServerDownGivesAClearError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	spec := rollouttest.New().Spec()
	c := connect(t, url, remote.Options{Spec: &spec, Attempts: 3, Backoff: time.Millisecond})
	_, err = c.NewEnv().Reset(envs.Train, 1)
	want := "remote env " + url + ": create: cannot connect: "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "connection refused (gave up after 3 attempts)") {
		t.Fatalf("got %v, want %q...connection refused (gave up after 3 attempts)", err, want)
	}
	if _, err := remote.Connect(context.Background(), url, remote.Options{Attempts: 1}); err == nil || !strings.Contains(err.Error(), ": spec: cannot connect") {
		t.Fatalf("connect to a server that is down: %v", err)
	}
}

// fakeServer answers with handler, which sees every request.
func fakeServer(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	return ts.URL
}

// guessSpec is the spec clients of fake servers are given.
var guessSpec = rollouttest.New().Spec()

func TestSlowServerTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var resets atomic.Int32
	url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/create":
			fmt.Fprint(w, `{"id": 1}`)
			return
		case "/reset":
			if resets.Add(1) > 1 {
				break // the second reset hangs
			}
			fmt.Fprint(w, `{"observation": "start", "available_actions": []}`)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	c := connect(t, url, remote.Options{Spec: &guessSpec, Timeout: 50 * time.Millisecond, Attempts: 3, Backoff: time.Millisecond})
	env := c.NewEnv()
	if _, err := env.Reset(envs.Train, 1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := env.Step("Action: guess[3]")
	// A step may have been carried out, so a timed-out step is not repeated.
	if err == nil || err.Error() != "remote env "+url+": step: no answer within 50ms" {
		t.Fatalf("got %v", err)
	}
	_, err = env.Reset(envs.Train, 2)
	if err == nil || err.Error() != "remote env "+url+": reset: no answer within 50ms (gave up after 3 attempts)" {
		t.Fatalf("got %v", err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Fatalf("timeouts took %v", elapsed)
	}
}

// TestTransientServerErrorsAreRetried: a reset (safe to repeat) is
// retried after a 500, a step only after a 503, which says the server did
// not take it.
func TestTransientServerErrorsAreRetried(t *testing.T) {
	var resets, steps atomic.Int32
	url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/create":
			fmt.Fprint(w, `{"id": 1}`)
		case "/reset":
			if resets.Add(1) == 1 {
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprint(w, `{"error": "database is warming up"}`)
				return
			}
			fmt.Fprint(w, `{"observation": "start", "available_actions": ["guess[1]"]}`)
		case "/step":
			if steps.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprint(w, `{"error": "busy"}`)
				return
			}
			fmt.Fprint(w, `{"observation": "1 is too low.", "reward": 0, "done": false, "available_actions": ["guess[2]"]}`)
		}
	})
	c := connect(t, url, remote.Options{Spec: &guessSpec, Backoff: time.Millisecond})
	env := c.NewEnv()
	if _, err := env.Reset(envs.Train, 1); err != nil {
		t.Fatal(err)
	}
	if resets.Load() != 2 {
		t.Fatalf("%d reset requests, want the one answered 500 and its repetition", resets.Load())
	}
	res, err := env.Step("guess[1]")
	if err != nil || res.Observation != "1 is too low." || steps.Load() != 2 {
		t.Fatalf("step after a 503: %+v %v (%d requests)", res, err, steps.Load())
	}
	if got := env.AvailableActions(); !reflect.DeepEqual(got, []string{"guess[2]"}) {
		t.Fatalf("available actions %v", got)
	}
}

func TestPersistentServerErrorsAreReported(t *testing.T) {
	var steps atomic.Int32
	url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/create":
			fmt.Fprint(w, `{"id": 1}`)
		case "/reset":
			fmt.Fprint(w, `{"observation": "start"}`)
		case "/available_actions":
			fmt.Fprint(w, `[]`)
		case "/step":
			code, text := http.StatusServiceUnavailable, "simulator restarting"
			if steps.Load() >= 4 {
				code, text = http.StatusInternalServerError, "simulator crashed"
			}
			steps.Add(1)
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"error": %q}`, text)
		}
	})
	c := connect(t, url, remote.Options{Spec: &guessSpec, Attempts: 4, Backoff: time.Millisecond})
	env := c.NewEnv()
	if _, err := env.Reset(envs.Train, 1); err != nil {
		t.Fatal(err)
	}
	_, err := env.Step("guess[1]")
	want := "remote env " + url + `: step: server answered 503: "simulator restarting" (gave up after 4 attempts)`
	if err == nil || err.Error() != want || steps.Load() != 4 {
		t.Fatalf("got %v after %d requests, want %s", err, steps.Load(), want)
	}
	// A 500 leaves the step's fate unknown: it is reported, not repeated.
	_, err = env.Step("guess[1]")
	if err == nil || !strings.Contains(err.Error(), `server answered 500: "simulator crashed"`) || steps.Load() != 5 {
		t.Fatalf("a step answered 500: %v after %d requests in all, want it reported after one more", err, steps.Load())
	}
}

func TestGarbageAnswersGiveClearErrors(t *testing.T) {
	ok := map[string]string{
		"/create":            `{"id": 3}`,
		"/reset":             `{"observation": "start", "available_actions": ["guess[1]"]}`,
		"/step":              `{"observation": "too low", "reward": 0, "done": false, "available_actions": ["guess[1]"]}`,
		"/available_actions": `["guess[1]"]`,
	}
	for name, tc := range map[string]struct {
		path, answer string
		want         string
	}{
		"html create":        {"/create", "<html>oops</html>", `create: answer is not a JSON object: "<html>oops</html>"`},
		"create without id":  {"/create", `{"name": "x"}`, `create: answer has no instance id`},
		"create error":       {"/create", `{"error": "no data loaded"}`, `create: server error: no data loaded`},
		"reset error":        {"/reset", `{"error": "The id 3 is not valid."}`, `reset: server error: The id 3 is not valid.`},
		"reset number":       {"/reset", `42`, `reset: answer is not a JSON object: "42"`},
		"reset obs type":     {"/reset", `{"observation": 7}`, `reset: observation is not a string`},
		"step truncated":     {"/step", `{"observation": "x", "rew`, `step: answer is not a JSON object`},
		"step no obs":        {"/step", `{"reward": 0, "done": false}`, `step: answer has no observation string`},
		"step bad reward":    {"/step", `{"observation": "x", "reward": "high", "done": false}`, `step: answer has no numeric reward`},
		"step no done":       {"/step", `{"observation": "x", "reward": 0}`, `step: answer has no boolean done`},
		"step bad actions":   {"/step", `{"observation": "x", "reward": 0, "done": false, "available_actions": 5}`, `step: available actions are neither a list of strings`},
		"step error 200":     {"/step", `{"error": "The task with environment 3 has finished."}`, `step: server error: The task with environment 3 has finished.`},
		"step bad info":      {"/step", `{"observation": "x", "reward": 0, "done": true, "info": {"valid_action": "yes"}}`, `step: info is not a step info`},
		"bad action listing": {"/available_actions", `{"buttons": []}`, `available actions: available actions are neither a list of strings nor {has_search_bar, clickables}`},
		"empty answer":       {"/step", ``, `step: answer is not a JSON object: (empty)`},
	} {
		url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			answer := ok[r.URL.Path]
			if r.URL.Path == tc.path {
				answer = tc.answer
			}
			if r.URL.Path == "/reset" && tc.path == "/available_actions" {
				answer = `{"observation": "start"}` // make the client ask
			}
			fmt.Fprint(w, answer)
		})
		c := connect(t, url, remote.Options{Spec: &guessSpec, Backoff: time.Millisecond})
		env := c.NewEnv()
		_, err := env.Reset(envs.Train, 1)
		if err == nil {
			_, err = env.Step("guess[1]")
		}
		if err == nil || !strings.HasPrefix(err.Error(), "remote env "+url+": "+tc.want) {
			t.Errorf("%s: got %v, want %q", name, err, tc.want)
		}
	}
}

// webshopServer mimics AgentGym's WebShop server: bare ids, env_idx,
// session_id, [observation, null] resets, {state, ...} steps and
// {has_search_bar, clickables} action listings.
type webshopServer struct {
	mu     sync.Mutex
	bodies []map[string]any
	page   string
}

func (s *webshopServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var body map[string]any
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil && err != io.EOF {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		s.bodies = append(s.bodies, body)
	}
	switch r.URL.Path {
	case "/create":
		fmt.Fprint(w, `7`)
	case "/reset":
		s.page = "search"
		fmt.Fprint(w, `["WebShop [SEP] Instruction: [SEP] i need red shoes [SEP] Search", null]`)
	case "/available_actions":
		if r.URL.Query().Get("env_idx") != "7" {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		if s.page == "search" {
			fmt.Fprint(w, `{"has_search_bar": true, "clickables": ["search"]}`)
		} else {
			fmt.Fprint(w, `{"has_search_bar": false, "clickables": ["buy now", "back to search"]}`)
		}
	case "/step":
		if body["action"] == "click[buy now]" {
			fmt.Fprint(w, `{"state": "Thank you for shopping with us!", "reward": 0.75, "done": true, "info": null}`)
			return
		}
		s.page = "item"
		fmt.Fprint(w, `{"state": "red shoes [SEP] Buy Now", "reward": 0.0, "done": false, "info": null}`)
	default:
		http.NotFound(w, r)
	}
}

func TestWebShopProtocol(t *testing.T) {
	fake := &webshopServer{}
	ts := httptest.NewServer(fake)
	defer ts.Close()
	c := connect(t, ts.URL, remote.Options{Protocol: remote.Protocols["webshop"], Spec: &guessSpec})
	env := c.NewEnv()
	obs, err := env.Reset(envs.Test, 12)
	if err != nil || !strings.Contains(obs, "i need red shoes") {
		t.Fatalf("reset: %q %v", obs, err)
	}
	if env.AvailableActions() != nil {
		t.Fatalf("search page lists %v; it takes free text", env.AvailableActions())
	}
	res, err := env.Step("Thought: search first.\nAction: search[red shoes]")
	if err != nil || res.Observation != "red shoes [SEP] Buy Now" || res.Done || !res.Info.ValidAction {
		t.Fatalf("search: %+v %v", res, err)
	}
	if got := env.AvailableActions(); !reflect.DeepEqual(got, []string{"click[buy now]", "click[back to search]"}) {
		t.Fatalf("item page actions %v", got)
	}
	res, err = env.Step("Action: click[buy now]")
	if err != nil || !res.Done || res.Reward != 0.75 || res.Info.Score != 0.75 || res.Info.Success {
		t.Fatalf("buy: %+v %v", res, err)
	}
	if _, err := env.Step("click[buy now]"); err == nil || !strings.Contains(err.Error(), "the episode is over") {
		t.Fatalf("step after the end: %v", err)
	}
	want := []map[string]any{
		{},
		{"env_idx": 7.0, "session_id": 12.0},
		{"env_idx": 7.0, "action": "search[red shoes]"},
		{"env_idx": 7.0, "action": "click[buy now]"},
	}
	if !reflect.DeepEqual(fake.bodies, want) {
		t.Fatalf("request bodies\n got %v\nwant %v", fake.bodies, want)
	}
}

func TestALFWorldProtocol(t *testing.T) {
	var reset map[string]any
	url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/create":
			fmt.Fprint(w, `{"id": 0}`)
		case "/reset":
			json.NewDecoder(r.Body).Decode(&reset)
			fmt.Fprint(w, `{"id": 0, "observation": "You are in the middle of a room.", "available_actions": ["go to desk 1", "look"], "task_type": "pick"}`)
		case "/step":
			fmt.Fprint(w, `{"observation": "You won!", "reward": 1.0, "available_actions": [], "done": true}`)
		case "/close":
			http.NotFound(w, r)
		}
	})
	c := connect(t, url, remote.Options{Protocol: remote.Protocols["alfworld"], Spec: &guessSpec})
	env := c.NewEnv()
	// The server knows task indices, not splits: one split, test, so that
	// no two splits play the same tasks under two names.
	if !reflect.DeepEqual(c.Spec().Splits, []envs.Split{envs.Test}) {
		t.Fatalf("splits %v, want test alone", c.Spec().Splits)
	}
	if _, err := env.Reset(envs.Unseen, 140); err == nil || !strings.Contains(err.Error(), "choose them by index (--seed0), not as unseen") {
		t.Fatalf("reset of an unseen task: %v", err)
	}
	if _, err := env.Reset(envs.Test, 140); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(reset, map[string]any{"id": 0.0, "game": 140.0, "world_type": "Text"}) {
		t.Fatalf("reset body %v", reset)
	}
	if got := env.AvailableActions(); !reflect.DeepEqual(got, []string{"go to desk 1", "look"}) {
		t.Fatalf("actions %v", got)
	}
	res, err := env.Step("Action: go to desk 1")
	if err != nil || !res.Done || !res.Info.Success || res.Info.Score != 1 {
		t.Fatalf("step: %+v %v", res, err)
	}
	if err := env.(io.Closer).Close(); err != nil {
		t.Fatalf("close on a server without /close: %v", err)
	}
}

func TestConnectValidates(t *testing.T) {
	for _, bad := range []string{"127.0.0.1:8000", "ftp://127.0.0.1/", "http://"} {
		if _, err := remote.Connect(context.Background(), bad, remote.Options{}); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"nothing": true}`) })
	if _, err := remote.Connect(context.Background(), url, remote.Options{}); err == nil || !strings.Contains(err.Error(), "spec: answer is not an environment spec") {
		t.Fatalf("garbage spec: %v", err)
	}
	if _, err := remote.LookupProtocol("gopher"); err == nil || !strings.Contains(err.Error(), "agentgym, agentrl, alfworld, sciworld, webshop") {
		t.Fatalf("unknown protocol: %v", err)
	}
}
