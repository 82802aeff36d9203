package domain_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestTextSignature(t *testing.T) {
	sig := domain.TextSignature("Fix the Login form", "login fails; the LOGIN token expires. é-mail a x")
	require.Equal(t, "expires:1 fails:1 fix:1 form:1 login:3 mail:1 token:1 é:1", sig)
	require.Equal(t, map[string]int{"expires": 1, "fails": 1, "fix": 1, "form": 1, "login": 3, "mail": 1, "token": 1, "é": 1},
		domain.ParseTextSignature(sig))
	require.Empty(t, domain.TextSignature("", " ;; the a "))

	// A 100 KB description: at most SignatureTerms words, the most frequent,
	// and a bounded size whatever the text's.
	var b strings.Builder
	for i := 0; b.Len() < 100_000; i++ {
		fmt.Fprintf(&b, "word%d common ", i%500)
		if i%7 == 0 {
			b.WriteString(strings.Repeat("z", 300) + " ")
		}
	}
	big := domain.TextSignature("title", b.String())
	got := domain.ParseTextSignature(big)
	require.Len(t, got, domain.SignatureTerms)
	require.Contains(t, got, "common")
	require.Contains(t, got, strings.Repeat("z", 40), "long words are cut")
	require.Less(t, len(big), domain.SignatureTerms*50)
}
