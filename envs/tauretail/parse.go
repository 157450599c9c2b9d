package tauretail

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// toolCall is a parsed action: a tool name and its arguments.
type toolCall struct {
	name string
	args arguments
}

// parseToolCall reads `name{JSON object}`. The name is case-insensitive;
// spaces around it, and parentheses around the object (`name({...})`), are
// tolerated. A tool without arguments may be written `name{}` or `name`.
func parseToolCall(action string) (toolCall, error) {
	s := strings.TrimSpace(action)
	end := 0
	for end < len(s) && isNameByte(s[end]) {
		end++
	}
	if end == 0 {
		return toolCall{}, errors.New("expected a tool name followed by JSON arguments")
	}
	call := toolCall{name: strings.ToLower(s[:end])}
	rest := strings.TrimSpace(s[end:])
	if len(rest) >= 2 && rest[0] == '(' && rest[len(rest)-1] == ')' {
		rest = strings.TrimSpace(rest[1 : len(rest)-1])
	}
	if rest == "" {
		call.args = arguments{}
		return call, nil
	}
	if rest[0] != '{' {
		return toolCall{}, fmt.Errorf("the arguments of %s must be a JSON object in braces", call.name)
	}
	args, err := parseJSONObject(rest)
	if err != nil {
		return toolCall{}, fmt.Errorf("the arguments of %s are not valid JSON: %w", call.name, err)
	}
	call.args = args
	return call, nil
}

func isNameByte(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// arguments are a tool call's JSON arguments.
type arguments map[string]any

// str returns a required string argument. Numbers are accepted and written
// back as digits, since models often leave item ids and zip codes unquoted.
func (a arguments) str(key string) (string, error) {
	v, ok := a[key]
	if !ok {
		return "", fmt.Errorf("missing argument %q", key)
	}
	s, ok := scalarString(v)
	if !ok {
		return "", fmt.Errorf("argument %q must be a string", key)
	}
	return s, nil
}

// optionalStr is str for an argument that may be left out (empty).
func (a arguments) optionalStr(key string) (string, error) {
	if _, ok := a[key]; !ok {
		return "", nil
	}
	return a.str(key)
}

// strList returns a required argument that is a list of strings.
func (a arguments) strList(key string) ([]string, error) {
	v, ok := a[key]
	if !ok {
		return nil, fmt.Errorf("missing argument %q", key)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("argument %q must be a list of strings", key)
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := scalarString(e)
		if !ok {
			return nil, fmt.Errorf("argument %q must be a list of strings", key)
		}
		out[i] = s
	}
	return out, nil
}

// checkKeys rejects arguments the tool does not take, naming the first in
// sorted order so that the message does not depend on map iteration.
func (a arguments) checkKeys(spec *toolSpec) error {
	var unknown []string
	for k := range a {
		if !slices.Contains(spec.params, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("%s takes no argument %q; write it as %s%s", spec.name, unknown[0], spec.name, spec.usage)
}

func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}
