package tauretail

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// checkLikeEncodingJSON holds parseJSONObject to encoding/json on one text.
func checkLikeEncodingJSON(t *testing.T, s string) {
	t.Helper()
	if trimmed := strings.TrimLeft(s, " \t\r\n"); trimmed == "" || trimmed[0] != '{' {
		if _, err := parseJSONObject(s); err == nil {
			t.Fatalf("%q: accepted a text that is not an object", s)
		}
		return
	}
	got, err := parseJSONObject(s)
	var want map[string]any
	wantErr := json.Unmarshal([]byte(s), &want)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, encoding/json says %v", s, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %#v, encoding/json gives %#v", s, got, want)
	}
}

var jsonSamples = []string{
	`{}`, ` { } `, `{"a": "b"}`, `{"a": [1, 2.5, -0.5e3, true, false, null, {"b": []}]}`,
	`{"a": "\u00e9\n\t\"\\\/\b\f\r"}`, `{"a": "\ud83d\ude00"}`, `{"a": "\ud83d"}`, `{"a": "\ud83d\u0041"}`,
	`{"a": "\udc00\ud800"}`, "{\"a\": \"\xff\xfe\"}", "{\"a\": \"caf\xc3\xa9\"}", "{\"a\": \"\x01\"}",
	`{"a": 01}`, `{"a": -}`, `{"a": 1.}`, `{"a": 1e}`, `{"a": 1e999}`, `{"a": .5}`, `{"a": +1}`,
	`{"a": tru}`, `{"a": nul}`, `{"a" 1}`, `{"a": 1,}`, `{"a": [1,]}`, `{a: 1}`, `{"a": 1} x`, `{"a": 1}}`,
	`{"a": "\x"}`, `{"a": "\u12"}`, `{"a": "\u12G4"}`, `{"a": "abc`, `{"a": "\`, `{"a": 1, "a": 2}`, `{"a":1}` + "\n",
	`[1]`, `null`, `"s"`, ``, `   `, `{`, `{"`, `{"a"`, `{"a":`, `{"a":[`, `{"a":[1`,
	`{"a": 12345678901234567890}`, `{"a": -0}`, `{"a": 1E+2}`, `{"a": 1e-2}`,
}

func TestParseJSONObjectMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonSamples {
		checkLikeEncodingJSON(t, s)
	}
	const limit = maxJSONDepth
	deep := func(n int) string { return `{"a": ` + strings.Repeat("[", n-1) + `1` + strings.Repeat("]", n-1) + `}` }
	checkLikeEncodingJSON(t, deep(limit))
	checkLikeEncodingJSON(t, deep(limit+1))
}

func FuzzParseJSONObject(f *testing.F) {
	for _, s := range jsonSamples {
		f.Add(s)
	}
	f.Fuzz(checkLikeEncodingJSON)
}
