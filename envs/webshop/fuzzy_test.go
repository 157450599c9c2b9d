package webshop

import "testing"

// Expected values are what thefuzz (with python-Levenshtein) returns.
func TestRatio(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"this is a test", "this is a test!", 97},
		{"fuzzy wuzzy was a bear", "wuzzy fuzzy was a bear", 91},
		{"abc", "abc", 100},
		{"abc", "xyz", 0},
		{"", "abc", 0},
		{"pack 12", "pack 24", 86}, // 2*6/14 = 85.7, rounded
	}
	for _, c := range cases {
		if got := ratio(c.a, c.b); got != c.want {
			t.Errorf("ratio(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestTokenSetRatio(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"fuzzy was a bear", "fuzzy fuzzy was a bear", 100},
		{"new york mets vs atlanta braves", "atlanta braves vs new york mets", 100},
		{"Gluten-Free", "gluten free", 100},
		{"chocolate", "dark chocolate", 100}, // a subset scores 100
		{"12 pack", "24 pack", 86},
		{"2 pack", "4 pack", 83},
		{"navy blue", "sky blue", 71},
		{"chocolate", "vanilla", 25},
		{"", "vanilla", 0},
		{"!!!", "vanilla", 0},
		{"café", "caf", 100}, // non-ASCII is dropped
	}
	for _, c := range cases {
		if got := tokenSetRatio(c.a, c.b); got != c.want {
			t.Errorf("tokenSetRatio(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := tokenSetRatio(c.b, c.a); got != c.want {
			t.Errorf("tokenSetRatio(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
	if fuzzyMatch("2 pack", "4 pack") || !fuzzyMatch("12 pack", "24 pack") {
		t.Error("fuzzyMatch must use the > 85 threshold")
	}
}

func TestLongestCommonSubsequenceLongInputs(t *testing.T) {
	a := "the quick brown fox jumps over the lazy dog and keeps running through the forest until night falls"
	b := "a quick brown dog jumps over the lazy fox and keeps walking through the field until the night falls"
	short := longestCommonSubsequence(a[:40], b[:40])
	long := longestCommonSubsequence(a, b)
	if long < short || long > len(a) || long < 70 {
		t.Errorf("LCS of long strings = %d (prefix LCS %d)", long, short)
	}
	if got := longestCommonSubsequence("ABCBDAB", "BDCABA"); got != 4 {
		t.Errorf("LCS(ABCBDAB, BDCABA) = %d, want 4", got)
	}
}
