package planning

import (
	"cmp"
	"slices"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// place runs Kahn's algorithm over the plannable tasks and returns them in
// placement order.
func (b *builder) place() []int {
	indeg := make([]int, len(b.nodes))
	ready := &rankHeap{nodes: b.nodes}
	for i, n := range b.nodes {
		if n.bad {
			continue
		}
		indeg[i] = len(n.deps)
		if indeg[i] == 0 {
			ready.push(i)
		}
	}
	// Per wave, the operations its tasks do to each file.
	var waves []map[int]uint8
	order := make([]int, 0, len(b.nodes))
	for ready.len() > 0 {
		i := ready.pop()
		n := b.nodes[i]
		w := 1
		for _, d := range n.deps {
			w = max(w, b.nodes[d].wave+1)
		}
		for ; w <= len(waves) && b.conflictsInWave(n, waves[w-1], w); w++ {
		}
		if w > len(waves) {
			waves = append(waves, map[int]uint8{})
		}
		n.wave = w
		for _, f := range n.files {
			ops := f.ops
			if f.unknown {
				ops = opAll
			}
			waves[w-1][f.file] |= ops
		}
		order = append(order, i)
		for _, d := range n.dependents {
			if indeg[d]--; indeg[d] == 0 {
				ready.push(d)
			}
		}
	}
	return order
}

// conflictsInWave reports whether n conflicts with a task already in wave w,
// whose file operations are files.
func (b *builder) conflictsInWave(n *node, files map[int]uint8, w int) bool {
	for _, f := range n.files {
		placed, ok := files[f.file]
		if !ok {
			continue
		}
		if f.unknown || conflictMasks[f.ops]&placed != 0 {
			return true
		}
	}
	for _, r := range n.resources {
		if b.nodes[r].wave == w {
			return true
		}
	}
	return false
}

// plan assembles the result from the placed tasks.
func (b *builder) plan(order []int) *Plan {
	p := &Plan{Waves: []Wave{}, Conflicts: []Conflict{}, Unplannable: []Unplannable{},
		CriticalPath: CriticalPath{TaskIDs: []string{}}}
	var placed []int
	for _, i := range b.byRank {
		if n := b.nodes[i]; !n.bad {
			placed = append(placed, i)
			for len(p.Waves) < n.wave {
				p.Waves = append(p.Waves, Wave{Number: len(p.Waves) + 1, TaskIDs: []string{}})
			}
			p.Waves[n.wave-1].TaskIDs = append(p.Waves[n.wave-1].TaskIDs, n.task.ID)
			p.TotalTasks++
			p.EstimatedHours += n.hours
		}
	}
	p.Conflicts = b.conflicts(placed)
	p.CriticalPath = b.criticalPath(order)
	for i, n := range b.nodes { // display id order
		if n.bad {
			reason, blockers := b.reason(i)
			p.Unplannable = append(p.Unplannable, Unplannable{TaskID: n.task.ID, Reason: reason, Blockers: blockers})
		}
	}
	return p
}

// conflicts lists the conflicting pairs among the placed tasks, ordered by the
// display ids of A and B, then FILE_CONFLICT (by path) before RESOURCE_CONFLICT.
func (b *builder) conflicts(placed []int) []Conflict {
	type found struct {
		a, b     int // node indexes: display id order
		resource bool
		file     int // interned path: path order
		opA, opB domain.FileOperation
	}
	var all []found
	byFile := map[int][]int{}
	for _, i := range placed {
		for _, f := range b.nodes[i].files {
			byFile[f.file] = append(byFile[f.file], i)
		}
	}
	for f, tasks := range byFile {
		slices.Sort(tasks)
		for x, i := range tasks {
			oi := b.opsOn(i, f)
			for _, j := range tasks[x+1:] {
				if opA, opB, ok := firstConflict(oi, b.opsOn(j, f)); ok {
					all = append(all, found{a: i, b: j, file: f, opA: opA, opB: opB})
				}
			}
		}
	}
	for _, i := range placed {
		for _, j := range b.nodes[i].resources {
			if i < j && !b.nodes[j].bad {
				all = append(all, found{a: i, b: j, resource: true})
			}
		}
	}
	slices.SortFunc(all, func(x, y found) int {
		if c := cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b)); c != 0 {
			return c
		}
		if x.resource != y.resource {
			if x.resource {
				return 1
			}
			return -1
		}
		return cmp.Compare(x.file, y.file)
	})
	out := make([]Conflict, len(all))
	for k, f := range all {
		c := Conflict{A: b.nodes[f.a].task.ID, B: b.nodes[f.b].task.ID, Type: domain.ConflictResource,
			Operations: []domain.FileOperation{}}
		if !f.resource {
			path := b.files[f.file]
			c.Type, c.FilePath, c.Operations = domain.ConflictFile, &path, []domain.FileOperation{f.opA, f.opB}
		}
		out[k] = c
	}
	return out
}

// opsOn returns the operations of node i on file f, as listed in its input.
func (b *builder) opsOn(i, f int) []domain.FileOperation {
	n := b.nodes[i]
	k, ok := slices.BinarySearchFunc(n.files, f, func(x fileOps, f int) int { return cmp.Compare(x.file, f) })
	if !ok {
		return nil
	}
	fo := n.files[k]
	var out []domain.FileOperation
	for _, op := range opOrder {
		if fo.ops&opBit(op) != 0 {
			out = append(out, op)
		}
	}
	if fo.unknown {
		path := b.files[f]
		seen := map[domain.FileOperation]bool{}
		var unknown []domain.FileOperation
		for _, im := range n.task.Files {
			if im.Path == path && opBit(im.Operation) == 0 && !seen[im.Operation] {
				seen[im.Operation] = true
				unknown = append(unknown, im.Operation)
			}
		}
		slices.Sort(unknown)
		out = append(out, unknown...)
	}
	return out
}

// criticalPath finds the chain of dependencies with the most effort hours among
// the placed tasks, given in a topological order.
func (b *builder) criticalPath(order []int) CriticalPath {
	best := make([]float64, len(b.nodes))
	prev := make([]int, len(b.nodes))
	end := -1
	for _, i := range order {
		n := b.nodes[i]
		prev[i] = -1
		for _, d := range n.deps {
			if prev[i] == -1 || best[d] > best[prev[i]] || (best[d] == best[prev[i]] && b.nodes[d].rank < b.nodes[prev[i]].rank) {
				prev[i] = d
			}
		}
		best[i] = n.hours
		if prev[i] >= 0 {
			best[i] += best[prev[i]]
		}
		if end == -1 || best[i] > best[end] || (best[i] == best[end] && n.rank < b.nodes[end].rank) {
			end = i
		}
	}
	cp := CriticalPath{TaskIDs: []string{}}
	if end == -1 {
		return cp
	}
	cp.EstimatedHours = best[end]
	for i := end; i >= 0; i = prev[i] {
		cp.TaskIDs = append(cp.TaskIDs, b.nodes[i].task.ID)
	}
	slices.Reverse(cp.TaskIDs)
	return cp
}

// rankHeap is the ready set: a binary min-heap of node indexes by rank.
type rankHeap struct {
	nodes []*node
	items []int
}

func (h *rankHeap) len() int { return len(h.items) }

func (h *rankHeap) less(x, y int) bool { return h.nodes[h.items[x]].rank < h.nodes[h.items[y]].rank }

func (h *rankHeap) push(i int) {
	h.items = append(h.items, i)
	for c := len(h.items) - 1; c > 0; {
		p := (c - 1) / 2
		if !h.less(c, p) {
			break
		}
		h.items[c], h.items[p] = h.items[p], h.items[c]
		c = p
	}
}

func (h *rankHeap) pop() int {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	for p := 0; ; {
		l, r, m := 2*p+1, 2*p+2, p
		if l < len(h.items) && h.less(l, m) {
			m = l
		}
		if r < len(h.items) && h.less(r, m) {
			m = r
		}
		if m == p {
			break
		}
		h.items[p], h.items[m] = h.items[m], h.items[p]
		p = m
	}
	return top
}
