package cluster_test

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/grouping/cluster"
)

const eps = 1e-9

var words = []string{"auth", "login", "token", "session", "cache", "index", "query", "schema", "migrate", "render",
	"button", "modal", "export", "import", "upload", "parse", "graph", "wave", "agent", "queue"}

func randomItems(r *rand.Rand, n, files int) ([]cluster.Item, []cluster.Link) {
	cats := []string{"FEATURE", "BUG", "TASK", "REFACTOR"}
	items := make([]cluster.Item, n)
	for i := range items {
		var fs []string
		for k := r.Intn(4); k > 0; k-- {
			fs = append(fs, fmt.Sprintf("dir%d/file%d.go", r.Intn(files/5+1), r.Intn(files)))
		}
		title, desc := "", ""
		for k := 2 + r.Intn(4); k > 0; k-- {
			title += words[r.Intn(len(words))] + " "
		}
		for k := r.Intn(10); k > 0; k-- {
			desc += words[r.Intn(len(words))] + " "
		}
		items[i] = cluster.Item{ID: fmt.Sprintf("id-%04d", r.Intn(1_000_000)*10000+i), Key: fmt.Sprintf("K-%05d", i),
			Title: title, Description: desc, Category: cats[r.Intn(len(cats))], Files: fs}
	}
	var links []cluster.Link
	for k := r.Intn(n + 1); k > 0; k-- {
		links = append(links, cluster.Link{A: items[r.Intn(n)].ID, B: items[r.Intn(n)].ID})
	}
	r.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	return items, links
}

func randomWeights(r *rand.Rand) cluster.Criteria {
	v := [5]float64{}
	total := 0.0
	for i := range v {
		v[i] = r.Float64()
		total += v[i]
	}
	return cluster.Criteria{FileOverlap: v[0] / total, Dependency: v[1] / total, Category: v[2] / total,
		DescriptionSimilarity: v[3] / total, Component: v[4] / total}
}

func inRange(t *testing.T, c cluster.Criteria) {
	t.Helper()
	for _, v := range []float64{c.FileOverlap, c.Dependency, c.Category, c.DescriptionSimilarity, c.Component} {
		require.GreaterOrEqual(t, v, 0.0)
		require.LessOrEqual(t, v, 1.0+eps)
	}
}

// Pair scores lie in [0, 1], are symmetric, and are Σ weight × breakdown.
func TestPairProperties(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewSource(seed))
		items, links := randomItems(r, 2+r.Intn(40), 30)
		w := randomWeights(r)
		m := cluster.NewModel(items, links, w)
		for i := 0; i < m.Len(); i++ {
			for j := 0; j < m.Len(); j++ {
				if i == j {
					continue
				}
				b := m.Pair(i, j)
				inRange(t, b)
				require.Equal(t, b, m.Pair(j, i), "symmetry")
				s := m.PairScore(i, j)
				require.InDelta(t, w.Score(b), s, eps)
				require.GreaterOrEqual(t, s, 0.0)
				require.LessOrEqual(t, s, 1.0+eps)
			}
		}
	}
}

// Groups: at least two members, each item in at most one group, breakdown in
// range, score = Σ weight × breakdown ≥ … and the same input (in any order)
// gives the same output.
func TestClusterProperties(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewSource(seed))
		items, links := randomItems(r, 2+r.Intn(60), 20)
		in := cluster.Input{Items: items, Links: links, Weights: randomWeights(r), MinScore: 0.2 + 0.5*r.Float64()}
		groups := cluster.Cluster(in)
		seen := map[string]bool{}
		for _, g := range groups {
			require.GreaterOrEqual(t, len(g.Members), 2)
			for _, id := range g.Members {
				require.False(t, seen[id], "an item in two groups")
				seen[id] = true
			}
			inRange(t, g.Breakdown)
			require.InDelta(t, in.Weights.Score(g.Breakdown), g.Score, eps)
			require.GreaterOrEqual(t, g.Score, 0.0)
			require.LessOrEqual(t, g.Score, 1.0+eps)
			require.NotEmpty(t, g.Reason)
			require.NotEmpty(t, g.Name)
		}
		shuffled := in
		shuffled.Items = append([]cluster.Item(nil), items...)
		r.Shuffle(len(shuffled.Items), func(i, j int) { shuffled.Items[i], shuffled.Items[j] = shuffled.Items[j], shuffled.Items[i] })
		again := cluster.Cluster(shuffled)
		require.True(t, reflect.DeepEqual(groups, again), "same input, same output (seed %d)", seed)
	}
}

// The example of the design: three tasks sharing two files and a dependency,
// two unrelated ones.
func TestClusterExample(t *testing.T) {
	items := []cluster.Item{
		{ID: "a", Key: "1", Title: "Add login form", Category: "FEATURE", Files: []string{"web/auth/login.go", "web/auth/session.go"}},
		{ID: "b", Key: "2", Title: "Validate login tokens", Category: "FEATURE", Files: []string{"web/auth/login.go", "web/auth/session.go", "web/auth/token.go"}},
		{ID: "c", Key: "3", Title: "Expire sessions", Category: "FEATURE", Files: []string{"web/auth/login.go", "web/auth/session.go"}},
		{ID: "d", Key: "4", Title: "Render charts", Category: "BUG", Files: []string{"ui/chart.ts"}},
		{ID: "e", Key: "5", Title: "Update docs", Category: "DOCS", Files: []string{"docs/readme.md"}},
	}
	links := []cluster.Link{{A: "b", B: "a"}, {A: "c", B: "b"}}
	groups := cluster.Cluster(cluster.Input{Items: items, Links: links, Weights: cluster.DefaultWeights, MinScore: 0.5})
	require.Len(t, groups, 1)
	g := groups[0]
	require.Equal(t, []string{"a", "b", "c"}, g.Members)
	// file overlap: a–b 2/3, a–c 1, b–c 2/3 → 7/9; dependency: 2 of 3 pairs; category 1; component 1.
	require.InDelta(t, 7.0/9, g.Breakdown.FileOverlap, eps)
	require.InDelta(t, 2.0/3, g.Breakdown.Dependency, eps)
	require.InDelta(t, 1.0, g.Breakdown.Category, eps)
	require.InDelta(t, 1.0, g.Breakdown.Component, eps)
	require.Contains(t, g.Reason, "file overlap")
	require.Contains(t, g.Reason, "dependency")
	require.Equal(t, "web/auth (3 tasks)", g.Name)
	require.False(t, math.IsNaN(g.Score))
}

func TestTies(t *testing.T) {
	// four identical items: the merge order follows keys, the result is one group
	items := []cluster.Item{}
	for i := 3; i >= 0; i-- {
		items = append(items, cluster.Item{ID: fmt.Sprint("id", i), Key: fmt.Sprint(i), Title: "same", Category: "TASK"})
	}
	groups := cluster.Cluster(cluster.Input{Items: items, Weights: cluster.DefaultWeights, MinScore: 0.3})
	require.Len(t, groups, 1)
	require.Equal(t, []string{"id0", "id1", "id2", "id3"}, groups[0].Members)
}

// BenchmarkCluster2000 scores and clusters 2,000 candidate tasks.
func BenchmarkCluster2000(b *testing.B) {
	r := rand.New(rand.NewSource(7))
	items, links := randomItems(r, 2000, 400)
	in := cluster.Input{Items: items, Links: links, Weights: cluster.DefaultWeights, MinScore: 0.5}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cluster.Cluster(in)
	}
}

// TestPairEmbeddings: two items with vectors of one model compare their
// descriptions by the vectors' cosine (negative counts as 0); another model,
// another length or a missing vector falls back to the words.
func TestPairEmbeddings(t *testing.T) {
	items := []cluster.Item{
		{ID: "a", Key: "1", Title: "alpha beta", Embedding: []float32{1, 0, 0}, EmbeddingModel: "m"},
		{ID: "b", Key: "2", Title: "gamma delta", Embedding: []float32{1, 1, 0}, EmbeddingModel: "m"},
		{ID: "c", Key: "3", Title: "alpha beta", Embedding: []float32{-1, 0, 0}, EmbeddingModel: "m"},
		{ID: "d", Key: "4", Title: "alpha beta", Embedding: []float32{0, 1, 0}, EmbeddingModel: "other"},
		{ID: "e", Key: "5", Title: "alpha beta"},
	}
	m := cluster.NewModel(items, nil, cluster.DefaultWeights)
	require.InDelta(t, 1/math.Sqrt2, m.Pair(0, 1).DescriptionSimilarity, eps, "no words in common, close vectors")
	require.Zero(t, m.Pair(0, 2).DescriptionSimilarity, "same words, opposite vectors")
	require.InDelta(t, 1, m.Pair(0, 3).DescriptionSimilarity, eps, "another model: the words")
	require.InDelta(t, 1, m.Pair(0, 4).DescriptionSimilarity, eps, "no vector: the words")
}
