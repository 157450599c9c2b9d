package bpe

import "unicode"

// PreTokenizer is the tokenizer.ggml.pre value whose splitting Split
// reproduces. llama.cpp maps "smollm" to two passes: every numeric code point
// becomes a piece of its own, then each remaining run is split with the GPT-2
// pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// It is chosen over "gpt-2" (the same pattern without the digit pass)
// because llama.cpp "cleans up" spaces before punctuation when it
// detokenises a "gpt-2" vocabulary, so text would not round-trip; single
// digits also suit the arithmetic in agent tasks.
const PreTokenizer = "smollm"

// Split cuts text into the pieces BPE merges never cross, exactly as
// llama.cpp does for PreTokenizer. Like llama.cpp it decodes the text
// leniently and re-encodes each code point, so invalid UTF-8 bytes come back
// as U+FFFD. (Four-byte sequences that decode above U+10FFFF, such as
// "\xf5\x80\x80\x80", make llama_tokenize throw and abort the process;
// Split turns them into U+FFFD. Text for llama.cpp should be made valid
// UTF-8 first, e.g. with strings.ToValidUTF8.)
func Split(text string) []string {
	cpts := codepoints(text)
	var pieces []string
	start := 0
	emit := func(end int) {
		if end > start {
			pieces = append(pieces, encodeCodepoints(cpts[start:end]))
		}
		start = end
	}
	segStart := 0
	for i, c := range cpts {
		if isNumber(c) {
			splitGPT2(cpts, segStart, i, emit)
			emit(i + 1)
			segStart = i + 1
		}
	}
	splitGPT2(cpts, segStart, len(cpts), emit)
	return pieces
}

// splitGPT2 splits cpts[begin:end] with the GPT-2 pattern, calling emit with
// the end of each piece. It follows llama.cpp's hand-written matcher, whose
// lookahead stops at the end of the segment.
func splitGPT2(cpts []rune, begin, end int, emit func(end int)) {
	const outside = -1
	at := func(pos int) rune {
		if pos >= begin && pos < end {
			return cpts[pos]
		}
		return outside
	}
	for pos := begin; pos < end; {
		c := cpts[pos]
		if c == '\'' && pos+1 < end {
			switch next := cpts[pos+1]; {
			case next == 's' || next == 't' || next == 'm' || next == 'd':
				pos += 2
				emit(pos)
				continue
			case pos+2 < end:
				after := cpts[pos+2]
				if (next == 'r' && after == 'e') || (next == 'v' && after == 'e') || (next == 'l' && after == 'l') {
					pos += 3
					emit(pos)
					continue
				}
			}
		}
		// An optional leading space joins a following letter, number or
		// symbol run.
		first := c
		if c == ' ' {
			first = at(pos + 1)
		}
		var class func(rune) bool
		switch {
		case first == outside:
		case isLetter(first):
			class = isLetter
		case isNumber(first):
			class = isNumber
		case !isSpace(first):
			class = isOther
		}
		if class != nil {
			if c == ' ' {
				pos++
			}
			for pos < end && class(cpts[pos]) {
				pos++
			}
			emit(pos)
			continue
		}
		// What is left is a run of whitespace.
		spaces := 1
		for pos+spaces < end && isSpace(cpts[pos+spaces]) {
			spaces++
		}
		if spaces > 1 && pos+spaces < end {
			spaces-- // \s+(?!\S): the last space leads the next piece
		}
		pos += spaces
		emit(pos)
	}
}

// cjkExtensionI is the one block of letters in llama.cpp's Unicode 15.1
// tables that Go's Unicode 15.0 tables lack.
var cjkExtensionI = &unicode.RangeTable{R32: []unicode.Range32{{Lo: 0x2EBF0, Hi: 0x2EE5D, Stride: 1}}}

func isLetter(c rune) bool { return unicode.IsLetter(c) || unicode.Is(cjkExtensionI, c) }

func isNumber(c rune) bool { return unicode.IsNumber(c) }

// isSpace is Unicode White_Space, the set llama.cpp uses for \s.
func isSpace(c rune) bool { return unicode.Is(unicode.White_Space, c) }

func isOther(c rune) bool { return !isSpace(c) && !isLetter(c) && !isNumber(c) }

// codepoints decodes UTF-8 the way llama.cpp does: overlong forms and
// surrogates are accepted as they are, anything else invalid becomes U+FFFD
// one byte at a time.
func codepoints(s string) []rune {
	out := make([]rune, 0, len(s))
	cont := func(i int) bool { return i < len(s) && s[i]&0xC0 == 0x80 }
	for i := 0; i < len(s); {
		b := s[i]
		switch {
		case b < 0x80:
			out = append(out, rune(b))
			i++
		case b&0xE0 == 0xC0 && cont(i+1):
			out = append(out, rune(b&0x1F)<<6|rune(s[i+1]&0x3F))
			i += 2
		case b&0xF0 == 0xE0 && cont(i+1) && cont(i+2):
			out = append(out, rune(b&0x0F)<<12|rune(s[i+1]&0x3F)<<6|rune(s[i+2]&0x3F))
			i += 3
		case b&0xF8 == 0xF0 && cont(i+1) && cont(i+2) && cont(i+3):
			c := rune(b&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F)
			if c > unicode.MaxRune {
				c = unicode.ReplacementChar
			}
			out = append(out, c)
			i += 4
		default:
			out = append(out, unicode.ReplacementChar)
			i++
		}
	}
	return out
}

// encodeCodepoints is the inverse of codepoints; unlike utf8.EncodeRune it
// keeps surrogates, as llama.cpp does.
func encodeCodepoints(cpts []rune) string {
	b := make([]byte, 0, len(cpts))
	for _, c := range cpts {
		switch {
		case c < 0x80:
			b = append(b, byte(c))
		case c < 0x800:
			b = append(b, 0xC0|byte(c>>6), 0x80|byte(c)&0x3F)
		case c < 0x10000:
			b = append(b, 0xE0|byte(c>>12), 0x80|byte(c>>6)&0x3F, 0x80|byte(c)&0x3F)
		default:
			b = append(b, 0xF0|byte(c>>18), 0x80|byte(c>>12)&0x3F, 0x80|byte(c>>6)&0x3F, 0x80|byte(c)&0x3F)
		}
	}
	return string(b)
}
