package remote_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentrl/agentrl/envs"
	"github.com/agentrl/agentrl/envs/remote"
	"github.com/agentrl/agentrl/rollout/rollouttest"
)

// post sends a JSON body and returns the status and the decoded answer.
func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		t.Fatalf("%s: answer is not a JSON object: %v", url, err)
	}
	return resp.StatusCode, ans
}

func TestServerAnswersTheProtocol(t *testing.T) {
	_, url := serve(t, remote.ServerOptions{})
	code, ans := post(t, url+"/create", "")
	if code != http.StatusOK || ans["id"] != 0.0 {
		t.Fatalf("create: %d %v", code, ans)
	}
	for _, tc := range []struct {
		path, body string
		code       int
		want       string
	}{
		{"/step", `{"id": 0, "action": "guess[1]"}`, http.StatusConflict, "no episode in progress; reset first"},
		{"/step", `{"id": 5, "action": "guess[1]"}`, http.StatusBadRequest, "unknown instance id 5"},
		{"/step", `{"id": 0}`, http.StatusBadRequest, "missing action"},
		{"/reset", `{"data_idx": 1}`, http.StatusBadRequest, "missing id"},
		{"/reset", `{"id": 0, "data_idx": 1, "split": "dev"}`, http.StatusBadRequest, `unknown split "dev"`},
		{"/reset", `{"id": 0, "data_idx": `, http.StatusBadRequest, "malformed JSON body"},
		{"/reset", `{"id": 0, "data_idx": 3, "split": "unseen"}`, http.StatusOK, ""},
		{"/step", `{"id": 0, "action": "Action: guess[99]"}`, http.StatusOK, ""},
	} {
		code, ans := post(t, url+tc.path, tc.body)
		msg, _ := ans["error"].(string)
		if code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: %d %v, want %d %q", tc.path, tc.body, code, ans, tc.code, tc.want)
		}
	}

	// The last step above was invalid: the full info says so.
	_, ans = post(t, url+"/step", `{"id": 0, "action": "dance"}`)
	info, _ := ans["info"].(map[string]any)
	if info["valid_action"] != false || ans["done"] != false || len(ans["available_actions"].([]any)) != 40 {
		t.Fatalf("invalid step answer %v", ans)
	}

	resp, err := http.Get(url + "/observation?id=0")
	if err != nil {
		t.Fatal(err)
	}
	var obs string
	json.NewDecoder(resp.Body).Decode(&obs)
	resp.Body.Close()
	if !strings.HasPrefix(obs, `Invalid action "dance"`) {
		t.Fatalf("observation %q", obs)
	}

	code, ans = post(t, url+"/close", `{"id": 0}`)
	if code != http.StatusOK || ans["closed"] != true {
		t.Fatalf("close: %d %v", code, ans)
	}
	if code, _ := post(t, url+"/step", `{"id": 0, "action": "guess[1]"}`); code != http.StatusBadRequest {
		t.Fatalf("step on a closed instance: %d", code)
	}
}

func TestServerRejectsSteppingAFinishedEpisode(t *testing.T) {
	_, url := serve(t, remote.ServerOptions{})
	post(t, url+"/create", "")
	post(t, url+"/reset", `{"id": 0, "data_idx": 4, "split": "train"}`)
	g := rollouttest.New()
	g.Reset(envs.Train, 4)
	_, ans := post(t, url+"/step", fmt.Sprintf(`{"id": 0, "action": "guess[%d]"}`, g.Target()))
	if ans["done"] != true || ans["reward"] != 1.0 {
		t.Fatalf("winning step: %v", ans)
	}
	code, ans := post(t, url+"/step", `{"id": 0, "action": "guess[1]"}`)
	if code != http.StatusConflict || ans["error"] != "the episode is over; reset first" {
		t.Fatalf("step after the end: %d %v", code, ans)
	}
}

func TestServerBoundsInstancesAndBodies(t *testing.T) {
	srv, url := serve(t, remote.ServerOptions{MaxInstances: 2, MaxBodyBytes: 256})
	for range 2 {
		if code, _ := post(t, url+"/create", ""); code != http.StatusOK {
			t.Fatalf("create: %d", code)
		}
	}
	code, ans := post(t, url+"/create", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(ans["error"].(string), "all 2 instances are in use") {
		t.Fatalf("third create: %d %v", code, ans)
	}
	// The client retries a full server, then says why it gave up.
	c := connect(t, url, remote.Options{Attempts: 2, Backoff: time.Millisecond})
	_, err := c.NewEnv().Reset(envs.Train, 1)
	if err == nil || !strings.Contains(err.Error(), `create: server answered 503: "all 2 instances are in use; close some (POST /close)" (gave up after 2 attempts)`) {
		t.Fatalf("create on a full server: %v", err)
	}
	post(t, url+"/close", `{"id": 1}`)
	if srv.Instances() != 1 {
		t.Fatalf("%d instances after a close", srv.Instances())
	}
	if _, err := c.NewEnv().Reset(envs.Train, 1); err != nil {
		t.Fatalf("create after a close: %v", err)
	}

	big := fmt.Sprintf(`{"id": 0, "action": %q}`, strings.Repeat("x", 300))
	code, ans = post(t, url+"/step", big)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(ans["error"].(string), "larger than 256 bytes") {
		t.Fatalf("large body: %d %v", code, ans)
	}
}

// panicky is an environment whose Step panics.
type panicky struct{ *rollouttest.Guess }

func (panicky) Step(string) (envs.StepResult, error) { panic("index out of range") }

func TestServerSurvivesAPanickingEnvironment(t *testing.T) {
	srv := remote.NewServer(func() envs.Env { return panicky{rollouttest.New()} }, remote.ServerOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	post(t, url+"/create", "")
	post(t, url+"/reset", `{"id": 0, "data_idx": 1}`)
	code, ans := post(t, url+"/step", `{"id": 0, "action": "guess[1]"}`)
	if code != http.StatusInternalServerError || ans["error"] != "environment panicked: index out of range" {
		t.Fatalf("panicking step: %d %v", code, ans)
	}

	// Graceful shutdown: Serve returns without error and the port closes.
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("server did not shut down")
	}
	if srv.Instances() != 0 {
		t.Fatal("instances survive shutdown")
	}
	if _, err := http.Get(url + "/"); err == nil {
		t.Fatal("server still answers after shutdown")
	}
}

func TestServerShutdownLetsRequestsFinish(t *testing.T) {
	entered, gate := make(chan struct{}, 1), make(chan struct{})
	srv := remote.NewServer(func() envs.Env {
		return &slowEnv{Guess: rollouttest.New(), entered: entered, gate: gate}
	}, remote.ServerOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	post(t, url+"/create", "")
	post(t, url+"/reset", `{"id": 0, "data_idx": 1}`)

	answered := make(chan int, 1)
	go func() {
		resp, err := http.Post(url+"/step", "application/json", strings.NewReader(`{"id": 0, "action": "guess[1]"}`))
		if err != nil {
			answered <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-entered
	cancel()
	time.Sleep(50 * time.Millisecond) // shutdown has begun and waits for the step
	close(gate)
	if code := <-answered; code != http.StatusOK {
		t.Fatalf("step in progress during shutdown answered %d", code)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// slowEnv is a Guess game whose Step waits for its gate to open.
type slowEnv struct {
	*rollouttest.Guess
	entered chan<- struct{}
	gate    <-chan struct{}
}

func (e *slowEnv) Step(action string) (envs.StepResult, error) {
	e.entered <- struct{}{}
	<-e.gate
	return e.Guess.Step(action)
}
