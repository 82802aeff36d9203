package domain

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// A task's text signature is what grouping's description similarity reads of
// its title and description: their SignatureTerms most frequent words with
// their counts, computed once when the task is written (the store fills
// Task.TextSignature on insert and update) so that clustering a project reads
// and compares a few hundred bytes per task, however long its description.
const (
	// SignatureTerms is how many words a signature keeps.
	SignatureTerms = 64
	// maxSignatureWord cuts longer words (in bytes).
	maxSignatureWord = 40
	// UnsignedTextPrefix is how many characters of the description of a task
	// without a signature (written before signatures existed) grouping
	// reads to sign it.
	UnsignedTextPrefix = 16 << 10
)

// groupingStopwords are the words the similarity ignores (as
// internal/grouping/cluster's Tokens does).
var groupingStopwords = map[string]bool{"the": true, "and": true, "for": true, "of": true, "to": true, "in": true, "on": true,
	"a": true, "an": true, "is": true, "it": true, "be": true, "with": true, "by": true, "or": true, "as": true, "at": true}

// TextSignature is the signature of a task's title and description:
// "word:count" pairs, space-separated, in word order, of the SignatureTerms
// most frequent words (ties to the smaller word). Words are lower-case runs
// of ASCII letters and digits or non-ASCII characters, two bytes or more,
// stopwords left out: the words of cluster.Tokens.
func TextSignature(title, description string) string {
	counts := map[string]int{}
	for _, text := range [2]string{title, description} {
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '\u00a0')
		}) {
			if len(w) < 2 || groupingStopwords[w] {
				continue
			}
			if len(w) > maxSignatureWord {
				w = cutUTF8(w, maxSignatureWord)
			}
			counts[w]++
		}
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if len(words) > SignatureTerms {
		words = words[:SignatureTerms]
	}
	slices.Sort(words)
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(counts[w]))
	}
	return b.String()
}

// ParseTextSignature reads a TextSignature back into word counts (pairs that
// do not parse are left out).
func ParseTextSignature(sig string) map[string]int {
	out := map[string]int{}
	for _, p := range strings.Fields(sig) {
		i := strings.LastIndexByte(p, ':')
		if i <= 0 {
			continue
		}
		n, err := strconv.Atoi(p[i+1:])
		if err != nil || n <= 0 {
			continue
		}
		out[p[:i]] = n
	}
	return out
}

// cutUTF8 cuts s to at most n bytes, before a split character.
func cutUTF8(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
