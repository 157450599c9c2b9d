package bpe

// GPT-2's byte-level BPE works on text in which every byte is replaced by a
// printable code point: bytes that are printable Latin-1 characters stand for
// themselves, the other 68 (controls, space, soft hyphen, ...) take the code
// points from U+0100 up, in byte order. Space, for example, becomes "Ġ"
// (U+0120). Vocabulary entries and merges are stored in this alphabet.
var byteToRune, runeToByte = byteAlphabet()

func byteAlphabet() ([256]rune, map[rune]byte) {
	var toRune [256]rune
	toByte := make(map[rune]byte, 256)
	printable := func(b int) bool {
		return ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF)
	}
	next := rune(256)
	for b := range 256 {
		r := rune(b)
		if !printable(b) {
			r = next
			next++
		}
		toRune[b] = r
		toByte[r] = byte(b)
	}
	return toRune, toByte
}

// mapBytes writes raw bytes in the byte-level alphabet.
func mapBytes(raw string) string {
	out := make([]rune, len(raw))
	for i := 0; i < len(raw); i++ {
		out[i] = byteToRune[raw[i]]
	}
	return string(out)
}

// unmapBytes turns byte-level alphabet text back into raw bytes; ok is false
// when the text has a code point outside the alphabet.
func unmapBytes(mapped string) (raw string, ok bool) {
	out := make([]byte, 0, len(mapped))
	for _, r := range mapped {
		b, found := runeToByte[r]
		if !found {
			return "", false
		}
		out = append(out, b)
	}
	return string(out), true
}
