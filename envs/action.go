package envs

import (
	"strings"
)

// ParseAction extracts the action from a model's free text. The action is
// what follows the last "Action:" marker (any case, any spacing before the
// colon) up to the end of that line; without a marker it is the last
// non-empty line. Surrounding whitespace, quotes and backticks are removed.
// Models often think before acting ("Thought: ... Action: search[shoes]"),
// hence the last marker.
func ParseAction(text string) string {
	lower := asciiLower(text)
	var rest string
	if i := lastMarker(lower); i >= 0 {
		rest = text[i:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && strings.TrimSpace(rest[:nl]) != "" {
			rest = rest[:nl]
		} else if nl >= 0 {
			// "Action:\nsearch[x]": the action is on the next non-empty line.
			rest = firstNonEmptyLine(rest)
		}
	} else {
		rest = lastNonEmptyLine(text)
	}
	return strings.Trim(strings.TrimSpace(rest), "`\"'")
}

// asciiLower lower-cases ASCII letters only, so that byte offsets in the
// result are offsets in s (strings.ToLower may change the length of
// non-ASCII text).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// lastMarker returns the index just past the last word "action" followed
// by optional spaces and ":" in lower, or -1. "transaction:" is no marker.
func lastMarker(lower string) int {
	for end := len(lower); end > 0; {
		i := strings.LastIndex(lower[:end], "action")
		if i < 0 {
			return -1
		}
		j := i + len("action")
		for j < len(lower) && (lower[j] == ' ' || lower[j] == '\t') {
			j++
		}
		if j < len(lower) && lower[j] == ':' && (i == 0 || !isWordByte(lower[i-1])) {
			return j + 1
		}
		end = i
	}
	return -1
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_'
}

func lastNonEmptyLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return lines[i]
		}
	}
	return ""
}

func firstNonEmptyLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) != "" {
			return line
		}
	}
	return ""
}
