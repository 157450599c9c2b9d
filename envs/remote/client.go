package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentrl/agentrl/envs"
)

// Options configures a Client. The zero value speaks the agentrl protocol
// with the defaults below.
type Options struct {
	// Protocol is the server family; the zero value means
	// Protocols["agentrl"].
	Protocol Protocol
	// Spec describes the environment. Nil asks the server (GET /spec, which
	// agentrl's server answers and AgentGym's do not).
	Spec *envs.Spec
	// Timeout bounds each HTTP request (default 30s).
	Timeout time.Duration
	// Attempts is how often a request is tried in all before giving up on
	// a transient failure (default 5).
	Attempts int
	// Backoff is the wait before the first retry; it doubles with each
	// retry, up to 5s (default 200ms).
	Backoff time.Duration
	// HTTPClient sends the requests (default: a client of its own).
	HTTPClient *http.Client
}

const (
	defaultTimeout  = 30 * time.Second
	defaultAttempts = 5
	defaultBackoff  = 200 * time.Millisecond
	maxBackoff      = 5 * time.Second
	// maxAnswer bounds what is read of an answer: observations are text,
	// so anything larger is a broken server.
	maxAnswer = 32 << 20
)

// Client talks to one environment server; it is safe for concurrent use
// and makes any number of instances (NewEnv).
type Client struct {
	base  string // without trailing slash
	proto Protocol
	spec  envs.Spec
	opts  Options
	http  *http.Client
}

// Connect prepares a client for the server at baseURL (http or https).
// It contacts the server only when opts.Spec is nil, to fetch the Spec.
func Connect(ctx context.Context, baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remote env %q: not an http(s) URL", baseURL)
	}
	if opts.Protocol.Name == "" {
		opts.Protocol = Protocols["agentrl"]
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.Attempts <= 0 {
		opts.Attempts = defaultAttempts
	}
	if opts.Backoff <= 0 {
		opts.Backoff = defaultBackoff
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), proto: opts.Protocol, opts: opts, http: opts.HTTPClient}
	if c.http == nil {
		c.http = &http.Client{Transport: &http.Transport{
			Proxy:               nil, // environment servers are local or on the cluster network
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	if opts.Spec != nil {
		c.spec = *opts.Spec
	} else {
		raw, err := c.do(ctx, "spec", http.MethodGet, "/spec", nil, nil, true)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &c.spec); err != nil || c.spec.Name == "" {
			return nil, c.errorf("spec", "answer is not an environment spec: %s", snippet(raw))
		}
	}
	if !c.proto.SendSplit {
		// The server is told a task index and nothing else: its task 3
		// is the same whatever the split, so a "train" and a "test" run
		// would play the same tasks under two names. It has one split.
		c.spec.Splits = []envs.Split{envs.Test}
	}
	return c, nil
}

// Spec returns the environment's description.
func (c *Client) Spec() envs.Spec { return c.spec }

// NewEnv returns a new instance; the server creates it on the first Reset.
func (c *Client) NewEnv() envs.Env { return &Env{c: c} }

// errorf formats an error the way every error of this package reads:
// "remote env URL: op: detail".
func (c *Client) errorf(op, format string, args ...any) error {
	return fmt.Errorf("remote env %s: %s: %s", c.base, op, fmt.Sprintf(format, args...))
}

// statusError is a non-2xx answer.
type statusError struct {
	code int
	body []byte
}

func (e *statusError) Error() string {
	msg := strings.TrimSpace(string(e.body))
	// Servers put their message in "error" (AgentGym, agentrl) or
	// "detail" (FastAPI).
	var fields map[string]json.RawMessage
	if json.Unmarshal(e.body, &fields) == nil {
		for _, k := range []string{"error", "detail"} {
			if v, ok := fields[k]; ok {
				msg = jsonText(v)
				break
			}
		}
	}
	return fmt.Sprintf("server answered %d: %s", e.code, snippetString(msg))
}

// do sends one request, retrying transient failures, and returns the
// answer's body. safe marks requests that may be repeated after a timeout
// (the server may have carried them out already).
func (c *Client) do(ctx context.Context, op, method, path string, query url.Values, body any, safe bool) (json.RawMessage, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, c.errorf(op, "encode request: %v", err)
		}
	}
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	wait := c.opts.Backoff
	var err error
	for attempt := 1; ; attempt++ {
		var raw []byte
		raw, err = c.once(ctx, method, target, payload)
		if err == nil {
			return raw, nil
		}
		if attempt == c.opts.Attempts || !transient(err, safe) || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		wait = min(2*wait, maxBackoff)
	}
	text := describe(err, c.opts.Timeout)
	if transient(err, safe) && c.opts.Attempts > 1 {
		text += fmt.Sprintf(" (gave up after %d attempts)", c.opts.Attempts)
	}
	return nil, fmt.Errorf("remote env %s: %s: %w", c.base, op, &describedError{text: text, err: err})
}

func (c *Client) once(ctx context.Context, method, target string, payload []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, err
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxAnswer {
		return nil, fmt.Errorf("answer is larger than %d MiB", maxAnswer>>20)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &statusError{code: resp.StatusCode, body: raw}
	}
	return raw, nil
}

// transient tells whether a failed request is worth repeating: the server
// said it failed (5xx), or the request never reached it (connection
// refused while the server starts). Timeouts, broken connections and a 5xx
// other than 503 leave the request's fate unknown (a proxy's 502 or 504,
// a server's 500 from a step that failed half-way), so only safe requests
// are repeated then; 503 says the server did not take the request.
func transient(err error, safe bool) bool {
	var se *statusError
	if errors.As(err, &se) {
		return se.code == http.StatusServiceUnavailable || (se.code >= 500 && safe)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
		return safe
	}
	return false
}

// describe words a transport error for a person.
func describe(err error, timeout time.Duration) string {
	var se *statusError
	if errors.As(err, &se) {
		return se.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %v", timeout)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("no answer within %v", timeout)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Sprintf("cannot connect: %v", op.Err)
	}
	return err.Error()
}

// describedError keeps the original error for errors.Is/As while reading
// as describe words it.
type describedError struct {
	text string
	err  error
}

func (e *describedError) Error() string { return e.text }
func (e *describedError) Unwrap() error { return e.err }

// snippet shortens an answer for an error message.
func snippet(raw []byte) string { return snippetString(strings.TrimSpace(string(raw))) }

func snippetString(s string) string {
	const n = 200
	if len(s) == 0 {
		return "(empty)"
	}
	if len(s) > n {
		return fmt.Sprintf("%q...", s[:n])
	}
	return fmt.Sprintf("%q", s)
}

// jsonText renders a JSON value as text: strings unquoted, others as JSON.
func jsonText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}
