package planning_test

import (
	"cmp"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/planning"
)

// shape says what a random graph looks like.
type shape struct {
	tasks      int
	files      int     // size of the file pool
	maxDeps    int     // dependencies per task, 0..maxDeps
	conflicts  int     // CONFLICTS_WITH links
	outside    int     // tasks outside the list
	done       float64 // share of COMPLETED list tasks
	backEdges  int     // links that may close cycles (defensive input)
	maxImpacts int
}

var (
	statuses   = []domain.TaskStatus{domain.StatusPending, domain.StatusBlocked, domain.StatusInProgress, domain.StatusFailed, domain.StatusValidating}
	operations = []domain.FileOperation{domain.OpCreate, domain.OpUpdate, domain.OpDelete, domain.OpRead}
	efforts    = []domain.Effort{domain.EffortTrivial, domain.EffortSmall, domain.EffortMedium, domain.EffortLarge, domain.EffortEpic}
)

// randomInput builds a random list: a DAG whose topological order is unrelated
// to display ids, file impacts from a shared pool, CONFLICTS_WITH links, outside
// dependencies, links of other types, and, when asked, edges that close cycles.
func randomInput(r *rand.Rand, s shape) planning.Input {
	var in planning.Input
	ids := r.Perm(s.tasks) // ids in another order than display ids
	topo := r.Perm(s.tasks)
	id := func(i int) string { return fmt.Sprintf("id-%06d", ids[i]) }
	for i := range s.tasks {
		t := planning.Task{ID: id(i), DisplayID: fmt.Sprintf("TU-P-TSK-%05d", i), Status: statuses[r.Intn(len(statuses))],
			PriorityScore: 10 * (1 + r.Intn(6))}
		if r.Float64() < s.done {
			t.Status = domain.StatusCompleted
		}
		if k := r.Intn(len(efforts) + 1); k < len(efforts) {
			t.Effort = &efforts[k]
		}
		for range r.Intn(s.maxImpacts + 1) {
			t.Files = append(t.Files, planning.FileImpact{Path: fmt.Sprintf("src/f%03d.go", r.Intn(s.files)),
				Operation: operations[r.Intn(len(operations))]})
		}
		in.Tasks = append(in.Tasks, t)
	}
	dep := func(a, b string) planning.Link { // a waits on b
		if r.Intn(2) == 0 {
			return planning.Link{Source: a, Target: b, Type: domain.RelDependsOn}
		}
		return planning.Link{Source: b, Target: a, Type: domain.RelBlocks}
	}
	// topo[k] may only wait on topo[j], j < k.
	for k := 1; k < s.tasks; k++ {
		for range r.Intn(s.maxDeps + 1) {
			in.Links = append(in.Links, dep(id(topo[k]), id(topo[r.Intn(k)])))
		}
	}
	for range s.backEdges {
		a, b := r.Intn(s.tasks), r.Intn(s.tasks)
		in.Links = append(in.Links, dep(id(a), id(b)))
	}
	for range s.conflicts {
		in.Links = append(in.Links, planning.Link{Source: id(r.Intn(s.tasks)), Target: id(r.Intn(s.tasks)), Type: domain.RelConflictsWith})
	}
	for range s.tasks / 5 {
		in.Links = append(in.Links, planning.Link{Source: id(r.Intn(s.tasks)), Target: id(r.Intn(s.tasks)), Type: domain.RelRelatedTo})
	}
	for o := range s.outside {
		oid := fmt.Sprintf("out-%04d", o)
		st := domain.StatusCompleted
		if r.Intn(3) == 0 {
			st = statuses[r.Intn(len(statuses))]
		}
		if r.Intn(5) > 0 { // some outside tasks are linked but not described: unknown
			in.Outside = append(in.Outside, planning.OutsideTask{ID: oid, DisplayID: fmt.Sprintf("TU-P-BUG-%03d", o), Status: st})
		}
		in.Links = append(in.Links, dep(id(r.Intn(s.tasks)), oid))
		in.Links = append(in.Links, dep(oid, id(r.Intn(s.tasks)))) // outside waits on the list: no matter
	}
	return in
}

var shapes = []struct {
	name   string
	shape  shape
	graphs int
}{
	{"tiny", shape{tasks: 5, files: 3, maxDeps: 2, conflicts: 1, outside: 1, done: 0.1, maxImpacts: 2}, 200},
	{"small", shape{tasks: 20, files: 8, maxDeps: 2, conflicts: 3, outside: 2, done: 0.1, maxImpacts: 3}, 200},
	{"dense-files", shape{tasks: 40, files: 4, maxDeps: 1, conflicts: 5, outside: 0, done: 0, maxImpacts: 3}, 100},
	{"deep", shape{tasks: 60, files: 30, maxDeps: 4, conflicts: 5, outside: 3, done: 0.2, maxImpacts: 2}, 100},
	{"cycles", shape{tasks: 30, files: 10, maxDeps: 2, conflicts: 3, outside: 2, done: 0.1, backEdges: 3, maxImpacts: 2}, 200},
	{"medium", shape{tasks: 150, files: 60, maxDeps: 3, conflicts: 15, outside: 10, done: 0.1, backEdges: 1, maxImpacts: 3}, 30},
}

// TestRandomGraphs checks the plan's properties on many random graphs, and that
// it matches a naive reference implementation of the planning rules.
func TestRandomGraphs(t *testing.T) {
	// seen counts what the graphs exercised, so that a generator gone wrong
	// cannot pass by never producing the hard cases.
	seen := map[string]int{}
	defer func() {
		for _, k := range []string{"outside", "cycle", "transitive", "self", "FILE_CONFLICT", "RESOURCE_CONFLICT", "split"} {
			require.Positive(t, seen[k], "no random graph exercised %s: %v", k, seen)
		}
		t.Logf("exercised: %v", seen)
	}()
	for si, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(1000 + si)))
			for g := range sh.graphs {
				in := randomInput(r, sh.shape)
				p := planning.Compute(in)
				ctx := fmt.Sprintf("%s graph %d", sh.name, g)
				checkPlan(t, in, p, ctx)
				for _, u := range p.Unplannable {
					for k, sub := range map[string]string{"outside": "outside this list", "cycle": "cycle",
						"transitive": "cannot be planned", "self": "itself"} {
						if strings.Contains(u.Reason, sub) {
							seen[k]++
						}
					}
				}
				for _, c := range p.Conflicts {
					seen[string(c.Type)]++
				}
				if len(p.Waves) > 1 {
					seen["split"]++
				}
				wantWaves, wantBad := reference(in)
				require.Equal(t, wantWaves, p.WaveOf(), "%s: waves differ from the reference", ctx)
				gotBad := map[string]bool{}
				for _, u := range p.Unplannable {
					gotBad[u.TaskID] = true
				}
				require.Equal(t, wantBad, gotBad, "%s: unplannable tasks differ from the reference", ctx)
				for range 2 {
					require.Equal(t, p, planning.Compute(shuffled(r, in)), "%s: shuffled input gives another plan", ctx)
				}
			}
		})
	}
}

// TestLargeRandomGraphs checks the properties (not the slow reference) on larger graphs.
func TestLargeRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, n := range []int{500, 1000} {
		in := randomInput(r, shape{tasks: n, files: n / 3, maxDeps: 3, conflicts: n / 10, outside: n / 50, done: 0.1, maxImpacts: 3})
		p := planning.Compute(in)
		checkPlan(t, in, p, fmt.Sprintf("%d tasks", n))
		require.Equal(t, p, planning.Compute(shuffled(r, in)))
	}
}

// shuffled returns in with every slice in another order.
func shuffled(r *rand.Rand, in planning.Input) planning.Input {
	out := planning.Input{Tasks: slices.Clone(in.Tasks), Links: slices.Clone(in.Links), Outside: slices.Clone(in.Outside)}
	for i := range out.Tasks {
		out.Tasks[i].Files = slices.Clone(out.Tasks[i].Files)
		r.Shuffle(len(out.Tasks[i].Files), func(a, b int) {
			out.Tasks[i].Files[a], out.Tasks[i].Files[b] = out.Tasks[i].Files[b], out.Tasks[i].Files[a]
		})
	}
	r.Shuffle(len(out.Tasks), func(a, b int) { out.Tasks[a], out.Tasks[b] = out.Tasks[b], out.Tasks[a] })
	r.Shuffle(len(out.Links), func(a, b int) { out.Links[a], out.Links[b] = out.Links[b], out.Links[a] })
	r.Shuffle(len(out.Outside), func(a, b int) { out.Outside[a], out.Outside[b] = out.Outside[b], out.Outside[a] })
	return out
}

// graph is the input read naively, for the checks and the reference.
type graph struct {
	tasks   map[string]planning.Task // unfinished list tasks
	deps    map[string]map[string]bool
	unmet   map[string]bool // has an unmet outside dependency
	res     map[[2]string]bool
	byScore []string
}

// pairConflicts is the file-conflict matrix, written out.
var pairConflicts = map[[2]domain.FileOperation]bool{
	{"CREATE", "CREATE"}: true, {"CREATE", "DELETE"}: true, {"UPDATE", "UPDATE"}: true,
	{"UPDATE", "DELETE"}: true, {"DELETE", "DELETE"}: true, {"DELETE", "READ"}: true,
}

func readGraph(in planning.Input) graph {
	g := graph{tasks: map[string]planning.Task{}, deps: map[string]map[string]bool{}, unmet: map[string]bool{}, res: map[[2]string]bool{}}
	done := map[string]bool{}
	for _, t := range in.Tasks {
		if t.Status == domain.StatusCompleted {
			done[t.ID] = true
		} else {
			g.tasks[t.ID] = t
		}
	}
	outsideDone := map[string]bool{}
	for _, o := range in.Outside {
		outsideDone[o.ID] = o.Status == domain.StatusCompleted
	}
	for _, l := range in.Links {
		a, b := l.Source, l.Target
		switch l.Type {
		case domain.RelBlocks:
			a, b = b, a
		case domain.RelDependsOn:
		case domain.RelConflictsWith:
			g.res[[2]string{a, b}], g.res[[2]string{b, a}] = true, true
			continue
		default:
			continue
		}
		if _, ok := g.tasks[a]; !ok {
			continue
		}
		if _, ok := g.tasks[b]; ok {
			if g.deps[a] == nil {
				g.deps[a] = map[string]bool{}
			}
			g.deps[a][b] = true
		} else if !done[b] && !outsideDone[b] {
			g.unmet[a] = true
		}
	}
	for id := range g.tasks {
		g.byScore = append(g.byScore, id)
	}
	slices.SortFunc(g.byScore, func(x, y string) int {
		tx, ty := g.tasks[x], g.tasks[y]
		return cmp.Or(cmp.Compare(ty.PriorityScore, tx.PriorityScore), cmp.Compare(tx.DisplayID, ty.DisplayID))
	})
	return g
}

func (g graph) conflict(a, b string) bool {
	if a != b && g.res[[2]string{a, b}] {
		return true
	}
	for _, fa := range g.tasks[a].Files {
		for _, fb := range g.tasks[b].Files {
			if fa.Path == fb.Path && (pairConflicts[[2]domain.FileOperation{fa.Operation, fb.Operation}] ||
				pairConflicts[[2]domain.FileOperation{fb.Operation, fa.Operation}]) {
				return true
			}
		}
	}
	return false
}

// reference plans naively, straight from the rules: a task is plannable when it has
// no unmet outside dependency and all its dependencies are plannable (a fixpoint,
// so cycles never become plannable); then, repeatedly, the ready task with the
// highest score (then smallest display id) goes to the earliest wave after its
// dependencies where it conflicts with no task already placed.
func reference(in planning.Input) (map[string]int, map[string]bool) {
	g := readGraph(in)
	good := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for id := range g.tasks {
			if good[id] || g.unmet[id] {
				continue
			}
			ok := true
			for d := range g.deps[id] {
				ok = ok && good[d]
			}
			if ok {
				good[id], changed = true, true
			}
		}
	}
	bad := map[string]bool{}
	for id := range g.tasks {
		if !good[id] {
			bad[id] = true
		}
	}
	wave := map[string]int{}
	members := map[int][]string{}
	for len(wave) < len(good) {
		for _, id := range g.byScore { // the first ready task in score order
			if !good[id] || wave[id] > 0 {
				continue
			}
			w, ready := 1, true
			for d := range g.deps[id] {
				ready = ready && wave[d] > 0
				w = max(w, wave[d]+1)
			}
			if !ready {
				continue
			}
			for slices.ContainsFunc(members[w], func(other string) bool { return g.conflict(id, other) }) {
				w++
			}
			wave[id] = w
			members[w] = append(members[w], id)
			break
		}
	}
	return wave, bad
}

// checkPlan checks the properties every plan must have.
func checkPlan(t *testing.T, in planning.Input, p *planning.Plan, ctx string) {
	t.Helper()
	g := readGraph(in)
	wave := map[string]int{}
	for i, w := range p.Waves {
		require.Equal(t, i+1, w.Number, ctx)
		require.NotEmpty(t, w.TaskIDs, "%s: wave %d is empty", ctx, w.Number)
		for k, id := range w.TaskIDs {
			_, ok := g.tasks[id]
			require.True(t, ok, "%s: %s is not an unfinished task of the list", ctx, id)
			require.Zero(t, wave[id], "%s: %s placed twice", ctx, id)
			wave[id] = w.Number
			if k > 0 { // claim order within a wave
				prev, cur := g.tasks[w.TaskIDs[k-1]], g.tasks[id]
				require.True(t, prev.PriorityScore > cur.PriorityScore ||
					(prev.PriorityScore == cur.PriorityScore && prev.DisplayID < cur.DisplayID), ctx)
			}
		}
	}
	require.Equal(t, len(wave), p.TotalTasks, ctx)
	bad := map[string]bool{}
	for _, u := range p.Unplannable {
		require.NotEmpty(t, u.Reason, ctx)
		require.NotEmpty(t, u.Blockers, ctx)
		require.Zero(t, wave[u.TaskID], "%s: %s both planned and unplannable", ctx, u.TaskID)
		require.False(t, bad[u.TaskID], ctx)
		bad[u.TaskID] = true
	}
	require.Equal(t, len(g.tasks), len(wave)+len(bad), "%s: every unfinished task is planned or unplannable", ctx)
	hours := 0.0
	for id, w := range wave {
		hours += planning.Hours(g.tasks[id].Effort)
		require.False(t, g.unmet[id], "%s: %s has an unmet outside dependency", ctx, id)
		explained := w == 1
		for d := range g.deps[id] {
			require.NotZero(t, wave[d], "%s: %s is planned, its dependency %s is not", ctx, id, d)
			require.Less(t, wave[d], w, "%s: %s is not after its dependency %s", ctx, id, d)
			explained = explained || wave[d] == w-1
		}
		for _, other := range p.Waves[w-1].TaskIDs {
			if other != id && g.conflict(id, other) {
				t.Fatalf("%s: %s and %s conflict in wave %d", ctx, id, other, w)
			}
		}
		if !explained {
			explained = slices.ContainsFunc(p.Waves[w-2].TaskIDs, func(other string) bool { return g.conflict(id, other) })
		}
		require.True(t, explained, "%s: %s in wave %d has no dependency or conflict in wave %d", ctx, id, w, w-1)
	}
	require.InDelta(t, hours, p.EstimatedHours, 1e-9, ctx)
	for id := range bad {
		_, ok := g.tasks[id]
		require.True(t, ok, ctx)
	}

	// Conflicts: exactly the conflicting pairs among planned tasks.
	type pair struct{ a, b string }
	reported := map[pair]bool{}
	for _, c := range p.Conflicts { // (plain ifs: require is slow in hot loops under -race)
		if wave[c.A] == 0 || wave[c.B] == 0 || g.tasks[c.A].DisplayID >= g.tasks[c.B].DisplayID || wave[c.A] == wave[c.B] {
			t.Fatalf("%s: bad conflict %+v (waves %d, %d)", ctx, c, wave[c.A], wave[c.B])
		}
		if c.Type == domain.ConflictFile && (len(c.Operations) != 2 || !planning.OperationsConflict(c.Operations[0], c.Operations[1])) {
			t.Fatalf("%s: bad file conflict %+v", ctx, c)
		}
		reported[pair{c.A, c.B}] = true
	}
	// Every pair of planned tasks that shares a file or a CONFLICTS_WITH link
	// (the only candidates) is reported exactly when it conflicts.
	candidates := map[pair]bool{}
	byFile := map[string][]string{}
	for id := range wave {
		for _, f := range g.tasks[id].Files {
			byFile[f.Path] = append(byFile[f.Path], id)
		}
	}
	for _, ids := range byFile {
		for _, a := range ids {
			for _, b := range ids {
				candidates[pair{a, b}] = true
			}
		}
	}
	for r := range g.res {
		candidates[pair{r[0], r[1]}] = true
	}
	for c := range candidates {
		if wave[c.a] > 0 && wave[c.b] > 0 && g.tasks[c.a].DisplayID < g.tasks[c.b].DisplayID && g.conflict(c.a, c.b) != reported[c] {
			t.Fatalf("%s: conflict %s %s: reported %v", ctx, c.a, c.b, reported[c])
		}
	}
	for c := range reported {
		if !candidates[c] {
			t.Fatalf("%s: reported conflict %v shares nothing", ctx, c)
		}
	}

	// Critical path: a chain of dependencies, as long as any.
	cp := p.CriticalPath
	sum := 0.0
	for i, id := range cp.TaskIDs {
		require.NotZero(t, wave[id], ctx)
		sum += planning.Hours(g.tasks[id].Effort)
		if i > 0 {
			require.True(t, g.deps[id][cp.TaskIDs[i-1]], "%s: critical path is not a chain", ctx)
		}
	}
	require.InDelta(t, sum, cp.EstimatedHours, 1e-9, ctx)
	longest := map[string]float64{}
	var chain func(id string) float64
	chain = func(id string) float64 {
		if h, ok := longest[id]; ok {
			return h
		}
		best := 0.0
		for d := range g.deps[id] {
			best = max(best, chain(d))
		}
		longest[id] = best + planning.Hours(g.tasks[id].Effort)
		return longest[id]
	}
	want := 0.0
	for id := range wave {
		want = max(want, chain(id))
	}
	require.InDelta(t, want, cp.EstimatedHours, 1e-9, "%s: critical path is not the longest", ctx)
	require.Equal(t, len(wave) == 0, len(cp.TaskIDs) == 0, ctx)
}
