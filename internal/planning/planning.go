// Package planning computes the wave plan of a task list: which of its unfinished
// tasks run in parallel, in what order, which pairs may never share a wave, the
// critical path, and which tasks cannot be planned and why. It is pure — the
// standard library and internal/domain only, no database — so that the dry run
// (the wavePlan query) and a run that materialises its waves get the same plan
// from the same input.
//
// # Rules (API.md, "Planning rules")
//
// Only the list's tasks that are not COMPLETED are planned. Ordering edges are
// `A DEPENDS_ON B` (B before A) and `A BLOCKS B` (A before B). An edge to a
// COMPLETED task of the list is met. A dependency on a task outside the list is
// met when that task is COMPLETED; otherwise the task is unplannable.
//
// Two tasks conflict when they touch the same file with a conflicting pair of
// operations (FILE_CONFLICT), or when they are linked by CONFLICTS_WITH
// (RESOURCE_CONFLICT). Conflicting pairs, in either order: CREATE/CREATE,
// CREATE/DELETE, UPDATE/UPDATE, UPDATE/DELETE, DELETE/DELETE, DELETE/READ; safe:
// READ/READ, CREATE/UPDATE, CREATE/READ, UPDATE/READ. Conflicting tasks never
// share a wave.
//
// # Algorithm
//
//  1. Unplannable tasks are set aside first: a task with a dependency outside the
//     list that is not COMPLETED; a task on a dependency cycle among the list's
//     tasks (links are checked for cycles when they are made, so this is only
//     defensive); and, transitively, every task that depends on an unplannable
//     task. Each gets a reason naming its direct causes by display id.
//  2. The others are placed by Kahn's algorithm. The ready set holds the tasks
//     whose dependencies are all placed, ordered by priorityScore descending, then
//     displayId ascending, then id ascending (display ids are unique; the id only
//     keeps the order total on odd input). The first ready task is taken and
//     placed in the smallest wave w >= 1 + the highest wave of its dependencies (1
//     without any) in which it conflicts with no task already placed; then every
//     dependent whose dependencies are now all placed joins the ready set. Until
//     the ready set is empty.
//
// Every wave from 1 to the last is non-empty: a task in wave w > 1 has a
// dependency or a conflicting task in wave w-1. Within a wave, tasks are listed in
// the ready-set order (priorityScore descending, displayId ascending), the order
// in which they should be claimed.
//
// The critical path is the chain of dependencies among the planned tasks with the
// most effort hours (domain.EffortHours; a task without an effort counts as
// DefaultEffort). On a tie the chain ends at the task first in the ready-set
// order, and each step back takes, of the dependencies with the longest chains,
// the one first in that order.
//
// An operation outside the four known ones (impossible through the API) is
// taken to conflict with every operation.
//
// Conflicts lists every FILE_CONFLICT (one per pair of tasks and file) and
// RESOURCE_CONFLICT between two planned tasks, whether or not they are also
// ordered by a dependency. DEPENDENCY pairs are not listed: the ordering is the
// waves themselves. Pairs regroups the conflicts by pair of tasks and adds the
// DEPENDENCY pairs (direct ordering links), for the parallelism analysis a run
// records.
//
// The plan depends only on the content of the input, never on the order of its
// slices: the same tasks and links always give the same plan.
package planning

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// DefaultEffort is the effort a task without one counts as on the critical path:
// an unestimated task is assumed to be of average size, not free, so that it
// lengthens a chain like any real work.
const DefaultEffort = domain.EffortMedium

// Task is a task of the list being planned.
type Task struct {
	ID            string
	DisplayID     string
	Status        domain.TaskStatus
	PriorityScore int
	Effort        *domain.Effort
	Files         []FileImpact
}

// FileImpact is what a task does to one file.
type FileImpact struct {
	Path      string
	Operation domain.FileOperation
}

// Link is a relationship that touches a task of the list. Only DEPENDS_ON,
// BLOCKS and CONFLICTS_WITH matter; other types are ignored.
type Link struct {
	Source, Target string
	Type           domain.RelationshipType
}

// OutsideTask is a task outside the list that a task of the list waits on.
type OutsideTask struct {
	ID        string
	DisplayID string
	Status    domain.TaskStatus
}

// Input is everything a plan is computed from.
type Input struct {
	// Tasks are the list's tasks, in any status (COMPLETED ones are not planned).
	Tasks []Task
	// Links are the relationships that touch the list's tasks.
	Links []Link
	// Outside are the tasks outside the list that the list's tasks depend on. A
	// dependency on a task that is neither here nor in Tasks counts as unmet.
	Outside []OutsideTask
}

// Plan is the result of planning a list.
type Plan struct {
	// Waves in order, numbered from 1.
	Waves []Wave
	// Conflicts are the conflicting pairs of planned tasks.
	Conflicts []Conflict
	// CriticalPath is the longest chain of dependencies by effort hours.
	CriticalPath CriticalPath
	// Unplannable are the unfinished tasks left out of the waves, by display id.
	Unplannable []Unplannable
	// TotalTasks is the number of tasks placed in waves.
	TotalTasks int
	// EstimatedHours is the effort of every planned task, in hours.
	EstimatedHours float64
}

// Wave is a set of tasks that may run in parallel once the waves before it are done.
type Wave struct {
	Number  int
	TaskIDs []string
}

// Conflict is a pair of tasks that must not run in the same wave. A is the task
// with the smaller display id. For a FILE_CONFLICT, FilePath is the file and
// Operations the conflicting operations of A and B on it (the first conflicting
// combination in the order CREATE, UPDATE, DELETE, READ when a task has several).
type Conflict struct {
	A, B       string
	Type       domain.ConflictType
	FilePath   *string
	Operations []domain.FileOperation
}

// CriticalPath is a chain of tasks, each depending on the one before it.
type CriticalPath struct {
	TaskIDs        []string
	EstimatedHours float64
}

// Unplannable is a task that cannot be planned, with the reason.
type Unplannable struct {
	TaskID string
	Reason string
	// Blockers are the ids of the direct causes: outside tasks not COMPLETED,
	// unplannable dependencies, the other tasks of a cycle (the task itself when
	// it depends on itself).
	Blockers []string
}

// WaveOf maps each planned task to its wave number.
func (p *Plan) WaveOf() map[string]int {
	out := make(map[string]int, p.TotalTasks)
	for _, w := range p.Waves {
		for _, id := range w.TaskIDs {
			out[id] = w.Number
		}
	}
	return out
}

// Hours is the effort of a task in hours, DefaultEffort when it has none.
func Hours(effort *domain.Effort) float64 {
	if effort == nil {
		return domain.EffortHours[DefaultEffort]
	}
	if h, ok := domain.EffortHours[*effort]; ok {
		return h
	}
	return domain.EffortHours[DefaultEffort]
}

// Operation bits, in the canonical order CREATE, UPDATE, DELETE, READ.
const (
	opCreate uint8 = 1 << iota
	opUpdate
	opDelete
	opRead
	opAll = opCreate | opUpdate | opDelete | opRead
)

var opOrder = []domain.FileOperation{domain.OpCreate, domain.OpUpdate, domain.OpDelete, domain.OpRead}

func opBit(op domain.FileOperation) uint8 {
	switch op {
	case domain.OpCreate:
		return opCreate
	case domain.OpUpdate:
		return opUpdate
	case domain.OpDelete:
		return opDelete
	case domain.OpRead:
		return opRead
	}
	return 0
}

// conflictsWith is, per operation bit, the operations it conflicts with: the
// matrix of API.md (symmetric).
var conflictsWith = map[uint8]uint8{
	opCreate: opCreate | opDelete,
	opUpdate: opUpdate | opDelete,
	opDelete: opCreate | opUpdate | opDelete | opRead,
	opRead:   opDelete,
}

// conflictMasks[ops] is the set of operations that conflict with any of ops.
var conflictMasks = func() (t [opAll + 1]uint8) {
	for ops := range t {
		for b, c := range conflictsWith {
			if uint8(ops)&b != 0 {
				t[ops] |= c
			}
		}
	}
	return t
}()

// OperationsConflict reports whether two tasks doing a and b to the same file
// conflict. An operation outside the four known ones conflicts with everything:
// the safe assumption.
func OperationsConflict(a, b domain.FileOperation) bool {
	ba, bb := opBit(a), opBit(b)
	if ba == 0 || bb == 0 {
		return true
	}
	return conflictsWith[ba]&bb != 0
}

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

// Compute plans in. It never fails: what cannot be planned is reported in
// Plan.Unplannable.
func Compute(in Input) *Plan {
	b := newBuilder(in)
	b.markUnplannable()
	order := b.place()
	return b.plan(order)
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

// firstConflict returns the first conflicting pair of operations of a and b.
func firstConflict(a, b []domain.FileOperation) (domain.FileOperation, domain.FileOperation, bool) {
	for _, x := range a {
		for _, y := range b {
			if OperationsConflict(x, y) {
				return x, y, true
			}
		}
	}
	return "", "", false
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
