// Package cluster scores how well a project's candidate tasks belong together
// and groups them: five pairwise criteria (file overlap, dependency, category,
// description similarity, component), their weighted sum, and average-linkage
// agglomerative clustering stopped at a minimum score. It is pure (no
// database, no clock) and deterministic: the same input gives the same groups,
// ties broken by the items' order key (the display id's sort key).
package cluster

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
)

// Criteria holds one value per criterion: the weights of a project, or the
// breakdown of a pair or a group (each value in [0, 1]).
type Criteria struct {
	FileOverlap           float64
	Dependency            float64
	Category              float64
	DescriptionSimilarity float64
	Component             float64
}

// DefaultWeights are the design's weights.
var DefaultWeights = Criteria{FileOverlap: 0.3, Dependency: 0.25, Category: 0.2, DescriptionSimilarity: 0.15, Component: 0.1}

// Score is Σ weight × value.
func (w Criteria) Score(b Criteria) float64 {
	return w.FileOverlap*b.FileOverlap + w.Dependency*b.Dependency + w.Category*b.Category +
		w.DescriptionSimilarity*b.DescriptionSimilarity + w.Component*b.Component
}

func (c Criteria) add(o Criteria) Criteria {
	return Criteria{c.FileOverlap + o.FileOverlap, c.Dependency + o.Dependency, c.Category + o.Category,
		c.DescriptionSimilarity + o.DescriptionSimilarity, c.Component + o.Component}
}

func (c Criteria) scale(f float64) Criteria {
	return Criteria{c.FileOverlap * f, c.Dependency * f, c.Category * f, c.DescriptionSimilarity * f, c.Component * f}
}

// Item is one candidate task.
type Item struct {
	ID          string
	Key         string // order key (display id sort key): ties go to the smaller key
	DisplayID   string
	Title       string
	Description string
	Category    string
	Files       []string // file impact paths and affected files
	// Terms, when not nil, are the item's word counts for the description
	// similarity (a capped signature computed when the task was written):
	// Title and Description are then not tokenised for it.
	Terms map[string]int
	// Embedding, of EmbeddingModel, when the task has one: the description
	// similarity of two items with vectors of the same model (and length) is
	// their cosine (below 0 counts as 0) instead of the TF-IDF one.
	Embedding      []float32
	EmbeddingModel string
}

// Link is a DEPENDS_ON or BLOCKS relationship between two items, by ID.
type Link struct{ A, B string }

// Input is what Cluster groups.
type Input struct {
	Items    []Item
	Links    []Link
	Weights  Criteria
	MinScore float64
}

// Group is a set of at least two items: Members are IDs in key order;
// Breakdown averages each criterion over the group's pairs and Score is
// Σ weight × Breakdown.
type Group struct {
	Members   []string
	Breakdown Criteria
	Score     float64
	Reason    string
	Name      string
}

// Model is the pairwise scorer over one set of items.
type Model struct {
	items    []Item
	w        Criteria
	index    map[string]int
	files    [][]int // interned, sorted file paths
	dirs     [][]int // interned, sorted directories
	vecs     []sparse
	embNorms []float64 // per item, its embedding's length
	links    [][]int   // per item, the sorted positions it is linked to
	cats     []int
	dirNames []string
}

type sparse struct {
	terms []int
	vals  []float64
}

// NewModel sorts the items by key (then ID) and prepares the criteria: file and
// directory sets, TF-IDF vectors of title and description over all items,
// and the dependency pairs.
func NewModel(items []Item, links []Link, w Criteria) *Model {
	items = slices.Clone(items)
	slices.SortFunc(items, func(a, b Item) int {
		if c := cmp.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	m := &Model{items: items, w: w, index: make(map[string]int, len(items))}
	for i, it := range items {
		m.index[it.ID] = i
	}
	paths, dirs := map[string]int{}, map[string]int{}
	intern := func(tab map[string]int, s string) int {
		id, ok := tab[s]
		if !ok {
			id = len(tab)
			tab[s] = id
		}
		return id
	}
	m.files = make([][]int, len(items))
	m.dirs = make([][]int, len(items))
	for i, it := range items {
		var fs, ds []int
		for _, f := range it.Files {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			fs = append(fs, intern(paths, f))
			ds = append(ds, intern(dirs, path.Dir(f)))
		}
		m.files[i], m.dirs[i] = sortedSet(fs), sortedSet(ds)
	}
	m.dirNames = make([]string, len(dirs))
	for d, id := range dirs {
		m.dirNames[id] = d
	}
	m.links = make([][]int, len(items))
	for _, l := range links {
		a, okA := m.index[l.A]
		b, okB := m.index[l.B]
		if okA && okB && a != b {
			m.links[a] = append(m.links[a], b)
			m.links[b] = append(m.links[b], a)
		}
	}
	for i := range m.links {
		m.links[i] = sortedSet(m.links[i])
	}
	cats := map[string]int{}
	m.cats = make([]int, len(items))
	for i, it := range items {
		m.cats[i] = intern(cats, it.Category)
	}
	m.vecs = tfidf(items)
	m.embNorms = make([]float64, len(items))
	for i, it := range items {
		var n float64
		for _, f := range it.Embedding {
			n += float64(f) * float64(f)
		}
		m.embNorms[i] = math.Sqrt(n)
	}
	return m
}

// embeddingSimilarity is the cosine of items i and j's embeddings, and
// whether both have one of the same model and length.
func (m *Model) embeddingSimilarity(i, j int) (float64, bool) {
	a, b := m.items[i], m.items[j]
	if len(a.Embedding) == 0 || len(a.Embedding) != len(b.Embedding) || a.EmbeddingModel != b.EmbeddingModel {
		return 0, false
	}
	if m.embNorms[i] == 0 || m.embNorms[j] == 0 {
		return 0, true
	}
	var dot float64
	for k, f := range a.Embedding {
		dot += float64(f) * float64(b.Embedding[k])
	}
	return min(max(dot/(m.embNorms[i]*m.embNorms[j]), 0), 1), true
}

func sortedSet(xs []int) []int {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// jaccard is |a ∩ b| / |a ∪ b| of two sorted sets; 0 when both are empty.
func jaccard(a, b []int) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

var stopwords = map[string]bool{"the": true, "and": true, "for": true, "of": true, "to": true, "in": true, "on": true,
	"a": true, "an": true, "is": true, "it": true, "be": true, "with": true, "by": true, "or": true, "as": true, "at": true}

// Tokens splits text into lower-case words of letters and digits, without
// stop words.
func Tokens(text string) []string {
	f := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '\u00a0')
	})
	out := f[:0]
	for _, t := range f {
		if len(t) >= 2 && !stopwords[t] {
			out = append(out, t)
		}
	}
	return out
}

// tfidf makes an L2-normalised TF-IDF vector of each item's title and
// description (or its Terms): tf is the term's count in the item, idf = ln((1+N)/(1+df)) + 1
// over the N items.
func tfidf(items []Item) []sparse {
	vocab := map[string]int{}
	counts := make([]map[int]int, len(items))
	var df []int
	for i, it := range items {
		c := map[int]int{}
		add := func(t string, n int) {
			id, ok := vocab[t]
			if !ok {
				id = len(vocab)
				vocab[t] = id
				df = append(df, 0)
			}
			if c[id] == 0 {
				df[id]++
			}
			c[id] += n
		}
		if it.Terms != nil {
			// Sorted, so that the vocabulary (and the sums) do not depend on
			// map order.
			for _, t := range slices.Sorted(maps.Keys(it.Terms)) {
				if n := it.Terms[t]; n > 0 {
					add(t, n)
				}
			}
		} else {
			for _, t := range Tokens(it.Title + " " + it.Description) {
				add(t, 1)
			}
		}
		counts[i] = c
	}
	n := float64(len(items))
	out := make([]sparse, len(items))
	for i, c := range counts {
		v := sparse{terms: make([]int, 0, len(c))}
		for id := range c {
			v.terms = append(v.terms, id)
		}
		slices.Sort(v.terms)
		var norm float64
		v.vals = make([]float64, len(v.terms))
		for k, id := range v.terms {
			x := float64(c[id]) * (math.Log((1+n)/(1+float64(df[id]))) + 1)
			v.vals[k] = x
			norm += x * x
		}
		if norm > 0 {
			norm = math.Sqrt(norm)
			for k := range v.vals {
				v.vals[k] /= norm
			}
		}
		out[i] = v
	}
	return out
}

func cosine(a, b sparse) float64 {
	var dot float64
	i, j := 0, 0
	for i < len(a.terms) && j < len(b.terms) {
		switch {
		case a.terms[i] == b.terms[j]:
			dot += a.vals[i] * b.vals[j]
			i++
			j++
		case a.terms[i] < b.terms[j]:
			i++
		default:
			j++
		}
	}
	return min(max(dot, 0), 1)
}

// Len is the number of items.
func (m *Model) Len() int { return len(m.items) }

// Item is the i-th item in key order.
func (m *Model) Item(i int) Item { return m.items[i] }

// Index is the position of the item with id, or -1.
func (m *Model) Index(id string) int {
	if i, ok := m.index[id]; ok {
		return i
	}
	return -1
}

// Pair is the breakdown of items i and j (positions in key order).
func (m *Model) Pair(i, j int) Criteria {
	var b Criteria
	b.FileOverlap = jaccard(m.files[i], m.files[j])
	if _, ok := slices.BinarySearch(m.links[i], j); ok {
		b.Dependency = 1
	}
	if m.cats[i] == m.cats[j] {
		b.Category = 1
	}
	if sim, ok := m.embeddingSimilarity(i, j); ok {
		b.DescriptionSimilarity = sim
	} else {
		b.DescriptionSimilarity = cosine(m.vecs[i], m.vecs[j])
	}
	b.Component = jaccard(m.dirs[i], m.dirs[j])
	return b
}

// PairScore is Σ weight × Pair(i, j).
func (m *Model) PairScore(i, j int) float64 { return m.w.Score(m.Pair(i, j)) }

// Describe scores a set of items (positions) as a group: the breakdown
// averaged over its pairs, the score, a reason and a name.
func (m *Model) Describe(members []int) Group {
	members = slices.Clone(members)
	slices.Sort(members)
	var sum Criteria
	pairs := 0
	for a := 0; a < len(members); a++ {
		for b := a + 1; b < len(members); b++ {
			sum = sum.add(m.Pair(members[a], members[b]))
			pairs++
		}
	}
	g := Group{Members: make([]string, len(members))}
	for k, i := range members {
		g.Members[k] = m.items[i].ID
	}
	if pairs > 0 {
		g.Breakdown = sum.scale(1 / float64(pairs))
	}
	g.Score = m.w.Score(g.Breakdown)
	g.Reason = Reason(m.w, g.Breakdown)
	g.Name = m.name(members)
	return g
}

// criterionNames in the order of Criteria's fields.
var criterionNames = [5]string{"file overlap", "dependency", "same category", "description similarity", "shared component"}

func (c Criteria) values() [5]float64 {
	return [5]float64{c.FileOverlap, c.Dependency, c.Category, c.DescriptionSimilarity, c.Component}
}

// Reason says in words which criteria dominate a group's score: those with the
// largest weighted contributions, in descending order, until they make up at
// least 75% of the score (criteria contributing nothing are never named).
func Reason(w Criteria, b Criteria) string {
	wv, bv := w.values(), b.values()
	type part struct {
		k       int
		contrib float64
	}
	var parts []part
	total := 0.0
	for k := range wv {
		c := wv[k] * bv[k]
		total += c
		if c > 0 {
			parts = append(parts, part{k, c})
		}
	}
	if total == 0 {
		return "No criterion links these tasks."
	}
	slices.SortStableFunc(parts, func(a, b part) int { return cmp.Compare(b.contrib, a.contrib) })
	var named []string
	acc := 0.0
	for _, p := range parts {
		named = append(named, fmt.Sprintf("%s (%.2f × %.2f = %.3f)", criterionNames[p.k], bv[p.k], wv[p.k], p.contrib))
		acc += p.contrib
		if acc >= 0.75*total {
			break
		}
	}
	s := "Dominated by " + joinWords(named)
	return s + fmt.Sprintf("; score %.3f.", total)
}

func joinWords(xs []string) string {
	switch len(xs) {
	case 1:
		return xs[0]
	case 2:
		return xs[0] + " and " + xs[1]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// name suggests a list name: the directory all members touch, else the most
// common words of their titles, else the first member's title.
func (m *Model) name(members []int) string {
	common := map[int]int{}
	for _, i := range members {
		for _, d := range m.dirs[i] {
			common[d]++
		}
	}
	var shared []string
	for d, n := range common {
		if n == len(members) && m.dirNames[d] != "." && m.dirNames[d] != "/" {
			shared = append(shared, m.dirNames[d])
		}
	}
	if len(shared) > 0 {
		slices.Sort(shared)
		return fmt.Sprintf("%s (%d tasks)", shared[len(shared)-1], len(members))
	}
	words := map[string]int{}
	for _, i := range members {
		for _, t := range slices.Compact(slices.Sorted(slices.Values(Tokens(m.items[i].Title)))) {
			words[t]++
		}
	}
	var top []string
	for t, n := range words {
		if n >= 2 {
			top = append(top, t)
		}
	}
	slices.SortFunc(top, func(a, b string) int {
		if c := cmp.Compare(words[b], words[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if len(top) > 3 {
		top = top[:3]
	}
	if len(top) > 0 {
		return fmt.Sprintf("%s (%d tasks)", strings.Join(top, " "), len(members))
	}
	t := []rune(m.items[members[0]].Title)
	if len(t) > 80 {
		t = t[:80]
	}
	return fmt.Sprintf("%s and %d more", string(t), len(members)-1)
}
