package math

import (
	"math/big"
	"strconv"
	"strings"
	"testing"
)

func TestExtractAnswer(t *testing.T) {
	cases := map[string]string{
		"#### 72":                               "72",
		"She sold 48 + 24 = 72 clips.\n#### 72": "72",
		"#### 72.00":                            "72",
		"#### $1,234":                           "1234",
		"#### 1,234.50 dollars":                 "1234.5",
		"#### -5":                               "-5",
		"#### -0":                               "0",
		"#### 007":                              "7",
		"#### 12\nmore text 99":                 "12",
		"#### 3 #### 4":                         "4",
		"#### none\nso 5 apples":                "5",
		"The answer is 42.":                     "42",
		"3 apples and 5 pears, so 8":            "8",
		"The answer is \\boxed{17}.":            "17",
		"\\boxed{17} but #### 18":               "18",
		"5-3 = 2":                               "2",
		"from 10-20":                            "20",
		"1,2,3":                                 "3",
		"x2":                                    "2",
		"Action: answer[56]":                    "56",
		"costs $0.50":                           "0.5",
		"version 1.2.3":                         "1.2",
		"#### .5":                               "0.5",
		"#### -.5":                              "-0.5",
		"costs $.50":                            "0.5",
		"1.5":                                   "1.5",
		"end.5":                                 "0.5",
	}
	for text, want := range cases {
		got, ok := extractAnswer(text)
		if !ok || got != want {
			t.Errorf("extractAnswer(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
	for _, text := range []string{"", "no numbers here", "####", "- - -", "$", "."} {
		if got, ok := extractAnswer(text); ok {
			t.Errorf("extractAnswer(%q) = %q, want none", text, got)
		}
	}
}

// FuzzExtractAnswer checks that extraction never panics, returns canonical
// decimals, and finds a number written after "####" whatever precedes it.
func FuzzExtractAnswer(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string, n int64) {
		if got, ok := extractAnswer(text); ok {
			checkCanonical(t, got)
		}
		want := strconv.FormatInt(n, 10)
		clean := strings.ReplaceAll(text, "####", "")
		if got, ok := extractAnswer(clean + "\n#### " + want); !ok || got != want {
			t.Fatalf("after %q: got %q, %v; want %s", clean, got, ok, want)
		}
	})
}

func checkCanonical(t *testing.T, s string) {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("%q is not a number", s)
	}
	neg := strings.HasPrefix(s, "-")
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if normalizeNumber(neg, intPart, frac) != s || s == "-0" {
		t.Fatalf("%q is not canonical", s)
	}
	if r.Sign() < 0 != neg {
		t.Fatalf("%q: sign", s)
	}
}
