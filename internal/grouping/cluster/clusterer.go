package cluster

import (
	"cmp"
	"slices"
)

// Cluster groups in.Items by average-linkage agglomerative clustering over
// the pairwise scores: it repeatedly merges the two clusters whose average
// pairwise score is highest, while that average is at least in.MinScore. Ties
// go to the pair whose smallest members come first in key order. Groups of
// two or more items are returned, highest score first (ties by the first
// member's key).
func Cluster(in Input) []Group {
	m := NewModel(in.Items, in.Links, in.Weights)
	return m.Cluster(in.MinScore)
}

// Cluster runs the clustering over the model's items (see the function Cluster).
func (m *Model) Cluster(minScore float64) []Group {
	n := m.Len()
	if n < 2 {
		return nil
	}
	// sum[i*n+j] is the sum of pairwise scores between clusters i and j
	// (clusters are named by their smallest member); size[i] their sizes.
	sum := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			s := m.PairScore(i, j)
			sum[i*n+j], sum[j*n+i] = s, s
		}
	}
	size := make([]int, n)
	members := make([][]int, n)
	alive := make([]bool, n)
	for i := range size {
		size[i], members[i], alive[i] = 1, []int{i}, true
	}
	link := func(i, j int) float64 { return sum[i*n+j] / float64(size[i]*size[j]) }
	best := make([]int, n) // best[i]: the alive cluster ≠ i with the highest linkage, smallest index on ties
	bestOf := func(i int) int {
		b := -1
		var bv float64
		for j := 0; j < n; j++ {
			if j == i || !alive[j] {
				continue
			}
			if v := link(i, j); b < 0 || v > bv {
				b, bv = j, v
			}
		}
		return b
	}
	for i := range best {
		best[i] = bestOf(i)
	}
	for {
		bi, bj := -1, -1
		var bv float64
		for i := 0; i < n; i++ {
			if !alive[i] || best[i] < 0 {
				continue
			}
			if v := link(i, best[i]); bi < 0 || v > bv {
				bi, bj, bv = i, best[i], v
			}
		}
		if bi < 0 || bv < minScore {
			break
		}
		a, b := min(bi, bj), max(bi, bj) // a absorbs b
		for k := 0; k < n; k++ {
			if alive[k] && k != a && k != b {
				s := sum[a*n+k] + sum[b*n+k]
				sum[a*n+k], sum[k*n+a] = s, s
			}
		}
		size[a] += size[b]
		members[a] = append(members[a], members[b]...)
		alive[b], members[b] = false, nil
		for k := 0; k < n; k++ {
			if !alive[k] {
				continue
			}
			if k == a || best[k] == a || best[k] == b {
				best[k] = bestOf(k)
				continue
			}
			// the merged cluster may now beat k's best
			if v, cur := link(k, a), link(k, best[k]); v > cur || (v == cur && a < best[k]) {
				best[k] = a
			}
		}
	}
	var groups []Group
	for i := 0; i < n; i++ {
		if alive[i] && len(members[i]) >= 2 {
			g := m.Describe(members[i])
			groups = append(groups, g)
		}
	}
	slices.SortStableFunc(groups, func(x, y Group) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		return cmp.Compare(m.Index(x.Members[0]), m.Index(y.Members[0]))
	})
	return groups
}
