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

// bigItems are 300 candidates of ~99 KB descriptions drawn from 5,000 words.
func bigItems() []cluster.Item {
	r := rand.New(rand.NewPCG(7, 25))
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx%d", i, r.IntN(1000))
	}
	items := make([]cluster.Item, 300)
	for i := range items {
		b := make([]byte, 0, 100_000)
		for len(b) < 99_000 {
			b = append(append(b, vocab[r.IntN(len(vocab))]...), ' ')
		}
		items[i] = cluster.Item{ID: fmt.Sprintf("t%03d", i), Key: fmt.Sprintf("k%03d", i), Title: fmt.Sprintf("Big task %d", i),
			Description: string(b), Category: "FEATURE", Files: []string{fmt.Sprintf("big/d%d/f.go", i)}}
	}
	return items
}

// BenchmarkCluster300BigText is one background clustering as it was: 300
// candidates' 99 KB descriptions tokenised every time.
func BenchmarkCluster300BigText(b *testing.B) {
	items := bigItems()
	b.ResetTimer()
	for b.Loop() {
		cluster.Cluster(cluster.Input{Items: items, Weights: cluster.DefaultWeights, MinScore: domain.DefaultMinScore})
	}
}

// BenchmarkCluster300BigSignature is the same clustering on the stored
// signatures (parsed, as the background reads them).
func BenchmarkCluster300BigSignature(b *testing.B) {
	items := bigItems()
	sigs := make([]string, len(items))
	for i, it := range items {
		sigs[i] = domain.TextSignature(it.Title, it.Description)
	}
	b.ResetTimer()
	for b.Loop() {
		signed := make([]cluster.Item, len(items))
		for i, it := range items {
			it.Description, it.Terms = "", domain.ParseTextSignature(sigs[i])
			signed[i] = it
		}
		cluster.Cluster(cluster.Input{Items: signed, Weights: cluster.DefaultWeights, MinScore: domain.DefaultMinScore})
	}
}
