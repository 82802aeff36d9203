package grouping_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/grouping/cluster"
)

// TestSignatureClustersLikeText: for texts of fewer than SignatureTerms
// distinct words, clustering on the stored signatures gives exactly the
// groups (and breakdowns) of clustering on the texts: domain.TextSignature
// takes words as cluster.Tokens does.
func TestSignatureClustersLikeText(t *testing.T) {
	words := []string{"auth", "login", "token", "session", "cache", "index", "query", "schema", "migrate", "render",
		"the", "a", "x", "Ünïcode", "ok", "Go1.26", "and"}
	r := rand.New(rand.NewPCG(1, 2))
	groups := 0
	for round := range 20 {
		var text, signed []cluster.Item
		for i := range 30 {
			title, desc := "", ""
			for k := 1 + r.IntN(4); k > 0; k-- {
				title += words[r.IntN(len(words))] + " "
			}
			for k := r.IntN(12); k > 0; k-- {
				desc += words[r.IntN(len(words))] + "; "
			}
			it := cluster.Item{ID: fmt.Sprintf("t%02d", i), Key: fmt.Sprintf("k%02d", i), Title: title, Description: desc,
				Category: []string{"BUG", "FEATURE"}[r.IntN(2)], Files: []string{fmt.Sprintf("d%d/f%d", r.IntN(3), r.IntN(5))}}
			text = append(text, it)
			it.Terms, it.Description = domain.ParseTextSignature(domain.TextSignature(title, desc)), ""
			signed = append(signed, it)
		}
		w := cluster.DefaultWeights
		want := cluster.Cluster(cluster.Input{Items: text, Weights: w, MinScore: 0.3})
		got := cluster.Cluster(cluster.Input{Items: signed, Weights: w, MinScore: 0.3})
		require.Equal(t, len(want), len(got), "round %d", round)
		groups += len(want)
		for k := range want {
			require.Equal(t, want[k].Members, got[k].Members, "round %d", round)
			require.InDelta(t, want[k].Score, got[k].Score, 1e-9, "round %d", round)
		}
	}
	require.Greater(t, groups, 20, "the rounds make groups to compare")
}
