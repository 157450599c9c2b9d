package bpe

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The expected pieces follow llama.cpp's "smollm" pre-tokenizer: numeric
// code points alone, then the GPT-2 pattern.
func TestSplit(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello world", []string{"Hello", " world"}},
		{"I'm here, you're not", []string{"I", "'m", " here", ",", " you", "'re", " not"}},
		{"they'll've", []string{"they", "'ll", "'ve"}},
		{"IT'S", []string{"IT", "'", "S"}}, // contractions are lower case only
		{"a  b", []string{"a", " ", " b"}},
		{"a   b", []string{"a", "  ", " b"}},
		{"end  ", []string{"end", "  "}},
		{"\n\nfoo", []string{"\n", "\n", "foo"}},
		{"x \n y", []string{"x", " \n", " y"}},
		{"tab\tthen", []string{"tab", "\t", "then"}},
		{"price $129.99!", []string{"price", " $", "1", "2", "9", ".", "9", "9", "!"}},
		{"x2y", []string{"x", "2", "y"}},
		{" 5 apples", []string{" ", "5", " apples"}},
		{"Action: search[red shoes]", []string{"Action", ":", " search", "[", "red", " shoes", "]"}},
		{"<|im_end|>", []string{"<|", "im", "_", "end", "|>"}},
		{"héllo wörld", []string{"héllo", " wörld"}},
		{"日本語テキスト", []string{"日本語テキスト"}},
		{"½ and ٣", []string{"½", " and", " ", "٣"}}, // numbers beyond ASCII stand alone too
		{"hi 👍🏽!", []string{"hi", " 👍🏽!"}},
		{"\u00a0x", []string{"\u00a0", "x"}}, // no-break space is \s but not ' '
		{"\U0002EBF0x", []string{"\U0002EBF0x"}},
	}
	for _, c := range cases {
		if got := Split(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Split(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Like llama.cpp, Split replaces invalid UTF-8 by U+FFFD but keeps overlong
// forms decoded and surrogates as they are.
func TestSplitInvalidUTF8(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"a\xffb", []string{"a", "\uFFFD", "b"}},
		{"a\x80", []string{"a", "\uFFFD"}},
		{"\xc3", []string{"\uFFFD"}},
		{"\xc0\x80", []string{"\x00"}},
		{"\xed\xa0\x80", []string{"\xed\xa0\x80"}},
		{"\xf5\x80\x80\x80z", []string{"\uFFFD", "z"}},
	}
	for _, c := range cases {
		if got := Split(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Split(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// randomText mixes the kinds of text that exercise the pre-tokenizer.
func randomText(r *rand.Rand) string {
	parts := []string{
		"the", " cat", "I'm", "'ll", "'", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000",
		"0", "42", "3.5", "$", "½", ".", ",", "!?", "[", "]", "<|im_end|>", "<s>", "Action: click[Buy Now]",
		"é", "naïve", "Ελλάδα", "русский", "中文", "한국어", "😀", "e\u0301", "\u200d", "\x00", "\x7f", "\uFFFD",
	}
	var b strings.Builder
	for range r.IntN(16) {
		if r.IntN(3) == 0 {
			c := rune(r.IntN(0x110000))
			if r.IntN(2) == 0 {
				c = rune(r.IntN(0x800))
			}
			if utf8.ValidRune(c) {
				b.WriteRune(c)
			}
			continue
		}
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

func TestSplitKeepsValidText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 20000 {
		s := randomText(r)
		pieces := Split(s)
		if got := strings.Join(pieces, ""); got != s {
			t.Fatalf("Split(%q) joins to %q", s, got)
		}
		for _, p := range pieces {
			if p == "" {
				t.Fatalf("Split(%q) has an empty piece", s)
			}
		}
	}
}

// Split's Unicode classes are Go's tables plus the letters Unicode 15.1
// added, matching llama.cpp's 15.1 tables. A Go release with newer tables
// needs that difference checked again.
func TestUnicodeVersion(t *testing.T) {
	if unicode.Version != "15.0.0" {
		t.Fatalf("Go's Unicode tables are version %s; check isLetter and isNumber against llama.cpp's unicode-data.cpp", unicode.Version)
	}
}

func TestByteAlphabet(t *testing.T) {
	seen := map[rune]bool{}
	for b := range 256 {
		r := byteToRune[b]
		if seen[r] || !unicode.IsPrint(r) || unicode.IsSpace(r) {
			t.Fatalf("byte %#x maps to %q", b, r)
		}
		seen[r] = true
	}
	for b, want := range map[byte]rune{' ': 'Ġ', '\n': 'Ċ', '\t': 'ĉ', 'a': 'a', '!': '!', 0: 'Ā', 0xAD: 'Ń'} {
		if byteToRune[b] != want {
			t.Errorf("byte %#x maps to %q, want %q", b, byteToRune[b], want)
		}
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if raw, ok := unmapBytes(mapBytes(string(all))); !ok || raw != string(all) {
		t.Fatal("byte alphabet does not round-trip")
	}
	if _, ok := unmapBytes("é€"); ok {
		t.Fatal("unmapBytes accepted a code point outside the alphabet")
	}
}
