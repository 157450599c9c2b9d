package webshop

import (
	"math"
	"sort"
	"strings"
)

// fuzzyMatchThreshold is WebShop's bar for a fuzzy match: a token-set ratio
// strictly above 85.
const fuzzyMatchThreshold = 85

// fuzzyMatch reports whether a and b match the way WebShop's reward matches
// attributes and options.
func fuzzyMatch(a, b string) bool {
	return tokenSetRatio(a, b) > fuzzyMatchThreshold
}

// tokenSetRatio is the token-set ratio of the fuzzy-matching libraries
// WebShop scores with (thefuzz / fuzzywuzzy), in [0, 100]. Both strings are
// reduced to ASCII, lower case and alphanumeric tokens; with I the sorted
// shared tokens and D1, D2 the sorted tokens only in a or only in b, the
// score is the best ratio among (I, I+D1), (I, I+D2) and (I+D1, I+D2). A
// string whose tokens are a subset of the other's therefore scores 100.
func tokenSetRatio(a, b string) int {
	ta, tb := fuzzyTokens(a), fuzzyTokens(b)
	if len(ta) == 0 || len(tb) == 0 {
		return 0
	}
	var shared, onlyA, onlyB []string
	for _, t := range ta {
		if containsSorted(tb, t) {
			shared = append(shared, t)
		} else {
			onlyA = append(onlyA, t)
		}
	}
	for _, t := range tb {
		if !containsSorted(ta, t) {
			onlyB = append(onlyB, t)
		}
	}
	sect := strings.Join(shared, " ")
	combinedA := strings.TrimSpace(sect + " " + strings.Join(onlyA, " "))
	combinedB := strings.TrimSpace(sect + " " + strings.Join(onlyB, " "))
	return max(ratio(sect, combinedA), ratio(sect, combinedB), ratio(combinedA, combinedB))
}

// fuzzyTokens returns the sorted, de-duplicated tokens of s after the
// libraries' default processing: non-ASCII characters dropped, everything
// but letters, digits and '_' turned into spaces, lower case.
func fuzzyTokens(s string) []string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			// Dropped, as the libraries do with force_ascii.
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte(' ')
		}
	}
	tokens := strings.Fields(b.String())
	sort.Strings(tokens)
	return compactSorted(tokens)
}

func compactSorted(tokens []string) []string {
	out := tokens[:0]
	for i, t := range tokens {
		if i == 0 || t != tokens[i-1] {
			out = append(out, t)
		}
	}
	return out
}

func containsSorted(sorted []string, t string) bool {
	i := sort.SearchStrings(sorted, t)
	return i < len(sorted) && sorted[i] == t
}

// ratio is the libraries' simple ratio: 100 * 2*LCS / (len(a)+len(b)), the
// normalised insertion/deletion similarity, rounded half to even like
// Python's round. Empty strings score 0 unless both are equal and non-empty.
func ratio(a, b string) int {
	if a == "" || b == "" {
		return 0
	}
	if a == b {
		return 100
	}
	lcs := longestCommonSubsequence(a, b)
	return int(math.RoundToEven(100 * 2 * float64(lcs) / float64(len(a)+len(b))))
}

// longestCommonSubsequence is the byte-wise LCS length of a and b, in
// O(len(a)*len(b)) time with one row of memory.
func longestCommonSubsequence(a, b string) int {
	if len(b) > len(a) {
		a, b = b, a
	}
	var stack [96]int
	var row []int
	if len(b)+1 <= len(stack) {
		row = stack[:len(b)+1]
	} else {
		row = make([]int, len(b)+1)
	}
	for i := 0; i < len(a); i++ {
		diagonal := 0 // row[j-1] of the previous row
		for j := 1; j <= len(b); j++ {
			above := row[j]
			if a[i] == b[j-1] {
				row[j] = diagonal + 1
			} else if row[j-1] > row[j] {
				row[j] = row[j-1]
			}
			diagonal = above
		}
	}
	return row[len(b)]
}
