package bpe

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentrl/agentrl/llm/gguf"
)

var testSpecials = []string{"<s>", "</s>", "<|im_start|>", "<|im_end|>"}

// testCorpus is generated English-like text with a skewed word distribution,
// numbers and agent-style lines.
var testCorpus = sync.OnceValue(func() string {
	r := rand.New(rand.NewPCG(9, 9))
	words := strings.Fields("the a of to and in is it you that he was for on are with as his they be at one have this from or had by hot word but what some we can out other were all there when up use your how said an each she which do their time if will way about many then them write would like so these her long make thing see him two has look more day could go come did number sound no most people my over know water than call first who may down side been now find any new work part take get place made live where after back little only round man year came show every good me give our under name very through just form sentence great think say help low line differ turn cause much mean before move right boy old too same tell does set three want air well also play small end put home read hand port large spell add even land here must big high such follow act why ask men change went light kind off need house picture try us again animal point mother world near build self earth father")
	var b strings.Builder
	for b.Len() < 200_000 {
		// Zipf-like: low indices are much more common.
		w := words[int(float64(len(words))*r.Float64()*r.Float64())]
		switch r.IntN(20) {
		case 0:
			fmt.Fprintf(&b, "Action: search[%s %s]\n", w, words[r.IntN(len(words))])
		case 1:
			fmt.Fprintf(&b, " %d.%02d", r.IntN(500), r.IntN(100))
		case 2:
			b.WriteString(". ")
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		case 3:
			b.WriteString("<|im_end|>\n<|im_start|>user\n")
		default:
			b.WriteString(" " + w)
		}
	}
	return b.String()
})

func learnTest(t testing.TB, vocab int) *Tokenizer {
	t.Helper()
	tok, err := Learn([]string{testCorpus()}, LearnOptions{VocabSize: vocab, Specials: testSpecials})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestLearnLayout(t *testing.T) {
	tok := learnTest(t, 1000)
	if tok.Len() != 1000 {
		t.Fatalf("vocabulary of %d tokens, want 1000", tok.Len())
	}
	// Each merge adds a token, unless an earlier one spelled it already.
	if len(tok.Merges()) < 1000-256-len(testSpecials) {
		t.Errorf("%d merges", len(tok.Merges()))
	}
	for b := range 256 {
		if piece, _ := tok.Piece(int32(b)); piece != string([]byte{byte(b)}) || tok.Types()[b] != TokenNormal {
			t.Fatalf("token %d is %q, want byte %#x", b, piece, b)
		}
	}
	for i, s := range testSpecials {
		id := int32(tok.Len() - len(testSpecials) + i)
		if got, ok := tok.Lookup(s); !ok || got != id || tok.Types()[id] != TokenControl {
			t.Errorf("special %q has id %d (found %v), want control token %d", s, got, ok, id)
		}
	}
	// The most frequent words of the corpus became single tokens.
	for _, w := range []string{" the", " of", " and"} {
		if ids := tok.Encode(w, false); len(ids) != 1 {
			t.Errorf("%q encodes to %d tokens", w, len(ids))
		}
	}
	// Special-token text was cut out of the corpus, so no learned token
	// spans its pieces.
	for _, text := range tok.Tokens()[256 : tok.Len()-len(testSpecials)] {
		if strings.Contains(text, "|>") {
			t.Errorf("learned token %q comes from special-token text", text)
		}
	}
}

func TestLearnDeterministic(t *testing.T) {
	a, b := learnTest(t, 800), learnTest(t, 800)
	if !slices.Equal(a.Merges(), b.Merges()) || !slices.Equal(a.Tokens(), b.Tokens()) {
		t.Fatal("two runs learned different vocabularies")
	}
	// A larger vocabulary extends the smaller one: same merges first.
	c := learnTest(t, 900)
	if !slices.Equal(c.Merges()[:len(a.Merges())], a.Merges()) {
		t.Fatal("merge order depends on the vocabulary size")
	}
}

func TestLearnStopsWhenNoPairRepeats(t *testing.T) {
	tok, err := Learn([]string{"abcd efgh"}, LearnOptions{VocabSize: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.Merges()) != 0 || tok.Len() != 256 {
		t.Fatalf("%d merges, %d tokens from text without repeats", len(tok.Merges()), tok.Len())
	}
	tok, err = Learn([]string{"abab abab"}, LearnOptions{VocabSize: 5000, MinPairCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	// "ab" occurs 4 times, then " abab"/"abab" twice: below the minimum.
	if got := tok.Merges(); !slices.Equal(got, []string{"a b"}) {
		t.Fatalf("merges %q", got)
	}
}

// A merge whose result spells a special token is skipped, since llama.cpp
// refuses vocabularies with duplicate tokens.
func TestLearnAvoidsSpecialText(t *testing.T) {
	tok, err := Learn([]string{strings.Repeat("ab ", 50)}, LearnOptions{VocabSize: 300, Specials: []string{"ab"}})
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := tok.Lookup("ab"); tok.Types()[id] != TokenControl {
		t.Fatal("special token lost")
	}
	if slices.Contains(tok.Merges(), "a b") {
		t.Fatal("learned the special token's text")
	}
}

func TestLearnErrors(t *testing.T) {
	if _, err := Learn([]string{"text"}, LearnOptions{VocabSize: 258, Specials: testSpecials}); err == nil {
		t.Error("vocabulary smaller than bytes + specials accepted")
	}
	if _, err := Learn([]string{"", "<s><s>"}, LearnOptions{VocabSize: 300, Specials: testSpecials}); !errors.Is(err, ErrEmptyCorpus) {
		t.Errorf("empty corpus: %v", err)
	}
	if _, err := Learn([]string{"text"}, LearnOptions{VocabSize: 300, Specials: []string{"<s>", "<s>"}}); err == nil {
		t.Error("repeated special accepted")
	}
}

// Decode(Encode(s)) == s for any valid UTF-8, with and without special
// token parsing.
func TestRoundTrip(t *testing.T) {
	tok := learnTest(t, 1200)
	r := rand.New(rand.NewPCG(2, 2))
	for range 20000 {
		s := randomText(r)
		for _, parse := range []bool{false, true} {
			ids := tok.Encode(s, parse)
			back, err := tok.Decode(ids)
			if err != nil {
				t.Fatal(err)
			}
			if back != s {
				t.Fatalf("parseSpecial=%v: %q -> %v -> %q", parse, s, ids, back)
			}
		}
	}
	if _, err := tok.Decode([]int32{int32(tok.Len())}); err == nil {
		t.Error("Decode accepted an id out of range")
	}
}

func TestEncodeSpecial(t *testing.T) {
	tok := learnTest(t, 600)
	start, _ := tok.Lookup("<|im_start|>")
	end, _ := tok.Lookup("<|im_end|>")
	text := "<|im_start|>user\nhi<|im_end|>"
	ids := tok.Encode(text, true)
	if ids[0] != start || ids[len(ids)-1] != end {
		t.Fatalf("parsed %v, want %d first and %d last", ids, start, end)
	}
	want := append(append([]int32{start}, tok.Encode("user\nhi", false)...), end)
	if !slices.Equal(ids, want) {
		t.Fatalf("parsed %v, want %v", ids, want)
	}
	for _, id := range tok.Encode(text, false) {
		if tok.Types()[id] == TokenControl {
			t.Fatalf("control token %d without parseSpecial", id)
		}
	}
	// Longer specials win: "</s>" is not "<s>" with a slash.
	if ids := tok.Encode("</s><s>", true); len(ids) != 2 || tok.pieces[ids[0]] != "</s>" {
		t.Fatalf("</s><s> -> %v", ids)
	}
}

// referenceEncode is the textbook BPE: repeatedly merge the adjacent pair
// with the lowest rank, leftmost first.
func referenceEncode(tok *Tokenizer, text string) []int32 {
	var out []int32
	for _, word := range Split(text) {
		syms := []int32{}
		for i := 0; i < len(word); i++ {
			syms = append(syms, tok.bytes[word[i]])
		}
		for {
			best, at := int32(-1), -1
			for i := 1; i < len(syms); i++ {
				if m, ok := tok.ranks[pairKey(syms[i-1], syms[i])]; ok && (best < 0 || m.rank < best) {
					best, at = m.rank, i-1
				}
			}
			if at < 0 {
				break
			}
			merged := tok.ranks[pairKey(syms[at], syms[at+1])].result
			syms = append(syms[:at], append([]int32{merged}, syms[at+2:]...)...)
		}
		out = append(out, syms...)
	}
	return out
}

func TestEncodeMatchesReference(t *testing.T) {
	tok := learnTest(t, 2000)
	r := rand.New(rand.NewPCG(3, 3))
	corpus := testCorpus()
	for range 5000 {
		var s string
		if r.IntN(2) == 0 {
			i := r.IntN(len(corpus) - 200)
			s = corpus[i : i+r.IntN(200)]
		} else {
			s = randomText(r)
		}
		if got, want := tok.Encode(s, false), referenceEncode(tok, s); !slices.Equal(got, want) {
			t.Fatalf("%q: Encode %v, reference %v", s, got, want)
		}
	}
}

func TestNewRejectsBadVocabularies(t *testing.T) {
	base := learnTest(t, 300)
	tokens, types, merges := base.Tokens(), base.Types(), base.Merges()
	with := func(edit func(tokens []string, types []TokenType, merges []string) ([]string, []TokenType, []string)) error {
		_, err := New(edit(slices.Clone(tokens), slices.Clone(types), slices.Clone(merges)))
		return err
	}
	cases := map[string]func([]string, []TokenType, []string) ([]string, []TokenType, []string){
		"missing byte": func(tk []string, ty []TokenType, m []string) ([]string, []TokenType, []string) {
			ty['x'] = TokenUnused
			return tk, ty, m
		},
		"duplicate token": func(tk []string, ty []TokenType, m []string) ([]string, []TokenType, []string) {
			tk[len(tk)-1] = tk[0]
			return tk, ty, m
		},
		"empty token": func(tk []string, ty []TokenType, m []string) ([]string, []TokenType, []string) {
			tk[len(tk)-1] = ""
			return tk, ty, m
		},
		"not byte-level": func(tk []string, ty []TokenType, m []string) ([]string, []TokenType, []string) {
			tk = append(tk, "a b")
			return tk, append(ty, TokenNormal), m
		},
		"type count": func(tk []string, ty []TokenType, m []string) ([]string, []TokenType, []string) {
			return tk, ty[1:], m
		},
		"unknown merge part": func(tk []string, ty []TokenType, m []string) ([]string, []TokenType, []string) {
			return tk, ty, append(m, "zzzq x")
		},
		"merge without space": func(tk []string, ty []TokenType, m []string) ([]string, []TokenType, []string) {
			return tk, ty, append(m, "ab")
		},
	}
	for name, edit := range cases {
		if err := with(edit); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := with(func(tk []string, ty []TokenType, m []string) ([]string, []TokenType, []string) { return tk, ty, m }); err != nil {
		t.Fatalf("unchanged vocabulary rejected: %v", err)
	}
}

func TestGGUFRoundTrip(t *testing.T) {
	tok := learnTest(t, 700)
	w := gguf.NewWriter()
	tok.WriteGGUF(w)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if pre, _ := f.GetString(KeyPre); pre != PreTokenizer {
		t.Errorf("pre-tokenizer %q", pre)
	}
	back, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Tokens(), tok.Tokens()) || !slices.Equal(back.Merges(), tok.Merges()) || !slices.Equal(back.Types(), tok.Types()) {
		t.Fatal("vocabulary changed in the round trip")
	}
	text := testCorpus()[:5000]
	if !slices.Equal(back.Encode(text, true), tok.Encode(text, true)) {
		t.Fatal("loaded tokenizer encodes differently")
	}

	w.Set(KeyPre, "gpt-2")
	buf.Reset()
	w.WriteTo(&buf)
	f, _ = gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if _, err := FromGGUF(f); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("other pre-tokenizer: %v", err)
	}
}

func BenchmarkLearn(b *testing.B) {
	corpus := []string{testCorpus()}
	b.SetBytes(int64(len(corpus[0])))
	for b.Loop() {
		if _, err := Learn(corpus, LearnOptions{VocabSize: 4096}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	tok := learnTest(b, 4096)
	text := testCorpus()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Encode(text, false)
	}
}
