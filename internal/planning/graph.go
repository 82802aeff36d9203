package planning

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// node is a planned-or-unplannable (unfinished) task of the list.
type node struct {
	task       Task
	hours      float64
	deps       []int // unfinished list tasks it waits on
	dependents []int
	outside    []string // unmet outside dependencies (ids)
	files      []fileOps
	resources  []int // CONFLICTS_WITH peers
	rank       int   // position in the ready-set order
	wave       int   // 0 until placed
	bad        bool  // unplannable
}

// fileOps is the set of operations a task does to one (interned) file.
type fileOps struct {
	file    int
	ops     uint8
	unknown bool // some operation outside the four known ones
}

func newBuilder(in Input) *builder {
	b := &builder{index: map[string]int{}, done: map[string]bool{}, outside: map[string]OutsideTask{}, selfLoop: map[int]bool{}}
	tasks := slices.Clone(in.Tasks)
	slices.SortFunc(tasks, func(x, y Task) int {
		return cmp.Or(cmp.Compare(x.DisplayID, y.DisplayID), cmp.Compare(x.ID, y.ID))
	})
	fileIDs := map[string]int{}
	paths := map[string]bool{}
	for _, t := range tasks {
		for _, f := range t.Files {
			paths[f.Path] = true
		}
	}
	b.files = make([]string, 0, len(paths))
	for p := range paths {
		b.files = append(b.files, p)
	}
	slices.Sort(b.files)
	for i, p := range b.files {
		fileIDs[p] = i
	}
	for _, t := range tasks {
		if _, dup := b.index[t.ID]; dup || b.done[t.ID] {
			continue
		}
		if t.Status == domain.StatusCompleted {
			b.done[t.ID] = true
			continue
		}
		n := &node{task: t, hours: Hours(t.Effort)}
		ops := map[int]*fileOps{}
		for _, f := range t.Files {
			id := fileIDs[f.Path]
			fo := ops[id]
			if fo == nil {
				fo = &fileOps{file: id}
				ops[id] = fo
			}
			if bit := opBit(f.Operation); bit != 0 {
				fo.ops |= bit
			} else {
				fo.unknown = true
			}
		}
		for _, fo := range ops {
			n.files = append(n.files, *fo)
		}
		slices.SortFunc(n.files, func(x, y fileOps) int { return cmp.Compare(x.file, y.file) })
		b.index[t.ID] = len(b.nodes)
		b.nodes = append(b.nodes, n)
	}
	for _, o := range in.Outside {
		if _, inList := b.index[o.ID]; !inList && !b.done[o.ID] {
			b.outside[o.ID] = o
		}
	}
	deps := make([]map[int]bool, len(b.nodes))
	res := make([]map[int]bool, len(b.nodes))
	outside := make([]map[string]bool, len(b.nodes))
	for _, l := range in.Links {
		switch l.Type {
		case domain.RelDependsOn, domain.RelBlocks:
			from, to := domain.OrderingEdge(l.Type, l.Source, l.Target)
			f, ok := b.index[from]
			if !ok {
				continue // a finished or outside task waits: nothing to plan
			}
			if t, ok := b.index[to]; ok {
				if t == f {
					b.selfLoop[f] = true
					continue
				}
				if deps[f] == nil {
					deps[f] = map[int]bool{}
				}
				deps[f][t] = true
				continue
			}
			if b.done[to] {
				continue
			}
			if o, ok := b.outside[to]; ok && o.Status == domain.StatusCompleted {
				continue
			}
			if outside[f] == nil {
				outside[f] = map[string]bool{}
			}
			outside[f][to] = true
		case domain.RelConflictsWith:
			s, ok1 := b.index[l.Source]
			t, ok2 := b.index[l.Target]
			if !ok1 || !ok2 || s == t {
				continue
			}
			for _, p := range [][2]int{{s, t}, {t, s}} {
				if res[p[0]] == nil {
					res[p[0]] = map[int]bool{}
				}
				res[p[0]][p[1]] = true
			}
		}
	}
	for i, n := range b.nodes {
		n.deps = sortedKeys(deps[i])
		n.resources = sortedKeys(res[i])
		for id := range outside[i] {
			n.outside = append(n.outside, id)
		}
		slices.SortFunc(n.outside, func(x, y string) int {
			return cmp.Or(cmp.Compare(b.displayOf(x), b.displayOf(y)), cmp.Compare(x, y))
		})
		for _, d := range n.deps {
			b.nodes[d].dependents = append(b.nodes[d].dependents, i)
		}
	}
	b.byRank = make([]int, len(b.nodes))
	for i := range b.byRank {
		b.byRank[i] = i
	}
	slices.SortFunc(b.byRank, func(x, y int) int {
		tx, ty := &b.nodes[x].task, &b.nodes[y].task
		return cmp.Or(cmp.Compare(ty.PriorityScore, tx.PriorityScore), cmp.Compare(tx.DisplayID, ty.DisplayID),
			cmp.Compare(tx.ID, ty.ID))
	})
	for r, i := range b.byRank {
		b.nodes[i].rank = r
	}
	return b
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// displayOf is the display id of any task the input names, or its id.
func (b *builder) displayOf(id string) string {
	if i, ok := b.index[id]; ok {
		return b.nodes[i].task.DisplayID
	}
	if o, ok := b.outside[id]; ok && o.DisplayID != "" {
		return o.DisplayID
	}
	return id
}

// markUnplannable marks the tasks with an unmet outside dependency, the tasks on
// a cycle, and everything that depends on them.
func (b *builder) markUnplannable() {
	cyclic := b.cycles()
	var queue []int
	for i, n := range b.nodes {
		if len(n.outside) > 0 || cyclic[i] != nil {
			n.bad = true
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, d := range b.nodes[i].dependents {
			if !b.nodes[d].bad {
				b.nodes[d].bad = true
				queue = append(queue, d)
			}
		}
	}
	b.cyclic = cyclic
}

// cycles returns, for each task on a dependency cycle, the tasks of its strongly
// connected component. Kahn's algorithm first strips every task that is on no
// cycle and downstream of none, so the search runs on what is left only (nothing,
// normally).
func (b *builder) cycles() map[int][]int {
	indeg := make([]int, len(b.nodes))
	for i, n := range b.nodes {
		indeg[i] = len(n.deps)
	}
	var queue []int
	for i, d := range indeg {
		if d == 0 {
			queue = append(queue, i)
		}
	}
	left := len(b.nodes)
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		left--
		for _, d := range b.nodes[i].dependents {
			if indeg[d]--; indeg[d] == 0 {
				queue = append(queue, d)
			}
		}
	}
	out := map[int][]int{}
	for i := range b.selfLoop {
		out[i] = []int{i}
	}
	if left == 0 {
		return out
	}
	// Tarjan's strongly connected components over the remaining tasks.
	var (
		counter int
		stack   []int
		onStack = map[int]bool{}
		num     = map[int]int{}
		low     = map[int]int{}
		visit   func(v int)
	)
	visit = func(v int) {
		counter++
		num[v], low[v] = counter, counter
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range b.nodes[v].deps {
			if indeg[w] == 0 {
				continue
			}
			if _, seen := num[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], num[w])
			}
		}
		if low[v] == num[v] {
			var comp []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 {
				slices.Sort(comp)
				for _, w := range comp {
					out[w] = comp
				}
			}
		}
	}
	for i := range b.nodes {
		if _, seen := num[i]; !seen && indeg[i] > 0 {
			visit(i)
		}
	}
	return out
}

// reason explains why node i is unplannable and names its direct causes.
func (b *builder) reason(i int) (string, []string) {
	n := b.nodes[i]
	var parts, blockers []string
	for _, id := range n.outside {
		blockers = append(blockers, id)
		if o, ok := b.outside[id]; ok {
			parts = append(parts, fmt.Sprintf("depends on %s (%s), which is outside this list and not COMPLETED",
				b.displayOf(id), o.Status))
		} else {
			parts = append(parts, fmt.Sprintf("depends on task %s, which is outside this list and not COMPLETED", id))
		}
	}
	comp := b.cyclic[i]
	inComp := map[int]bool{}
	if b.selfLoop[i] {
		blockers = append(blockers, n.task.ID)
		parts = append(parts, "depends on itself")
	}
	if len(comp) > 1 {
		var peers []string
		for _, j := range comp {
			inComp[j] = true
			if j != i {
				peers = append(peers, b.nodes[j].task.DisplayID)
				blockers = append(blockers, b.nodes[j].task.ID)
			}
		}
		parts = append(parts, "is on a dependency cycle with "+strings.Join(peers, ", "))
	}
	for _, d := range n.deps {
		if b.nodes[d].bad && !inComp[d] {
			blockers = append(blockers, b.nodes[d].task.ID)
			parts = append(parts, fmt.Sprintf("depends on %s, which cannot be planned", b.nodes[d].task.DisplayID))
		}
	}
	return strings.Join(parts, "; "), blockers
}

type builder struct {
	nodes    []*node
	index    map[string]int // unfinished list task id -> node
	done     map[string]bool
	outside  map[string]OutsideTask
	files    []string // interned paths
	byRank   []int    // node indexes in ready-set order
	selfLoop map[int]bool
	cyclic   map[int][]int // task on a cycle -> the tasks of its cycle
}
