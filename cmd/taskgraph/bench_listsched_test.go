package main

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// simEffort is an effort of the simulated graph: its hours
// (domain.EffortHours) and its weight in the draw.
type simEffort struct {
	name   string
	hours  float64
	weight int
}

// simEfforts: mostly small tasks, a few large and epic ones.
var simEfforts = []simEffort{{"TRIVIAL", 0.5, 25}, {"SMALL", 2, 35}, {"MEDIUM", 6, 25}, {"LARGE", 16, 12}, {"EPIC", 40, 3}}

// simGraph is the random DAG of BenchmarkSimulatedRun, by task index: each
// task's effort, the file it UPDATEs (30% of the tasks, one of 30 files;
// -1: none) and its dependencies on recent tasks (links: [i, j], i waits on
// j).
type simGraph struct {
	efforts []simEffort
	files   []int
	links   [][2]int
}

// newSimGraph draws the graph of n tasks from seed: the same graph every
// time.
func newSimGraph(n int, seed uint64) *simGraph {
	rng := rand.New(rand.NewPCG(seed, 7))
	g := &simGraph{efforts: make([]simEffort, n), files: make([]int, n)}
	for i := range n {
		w := rng.IntN(100)
		g.efforts[i] = simEfforts[0]
		for _, x := range simEfforts {
			if w < x.weight {
				g.efforts[i] = x
				break
			}
			w -= x.weight
		}
		g.files[i] = -1
		if rng.IntN(100) < 30 {
			g.files[i] = rng.IntN(30)
		}
	}
	for i := 1; i < n; i++ {
		if rng.IntN(100) >= 60 {
			continue
		}
		seen := map[int]bool{}
		for range 1 + rng.IntN(2) {
			j := max(0, i-50) + rng.IntN(min(i, 50))
			if !seen[j] {
				seen[j] = true
				g.links = append(g.links, [2]int{i, j})
			}
		}
	}
	return g
}

// rules is the graph as an EAGER run sees it, its tasks named ids: who
// waits on whom and which tasks conflict (both UPDATE the same file).
func (g *simGraph) rules(ids []string) (waitingOn, conflicts map[string][]string) {
	waitingOn = map[string][]string{}
	for _, l := range g.links {
		waitingOn[ids[l[1]]] = append(waitingOn[ids[l[1]]], ids[l[0]])
	}
	byFile := map[int][]string{}
	for i, f := range g.files {
		if f >= 0 {
			byFile[f] = append(byFile[f], ids[i])
		}
	}
	conflicts = map[string][]string{}
	for _, same := range byFile {
		for _, a := range same {
			for _, o := range same {
				if a != o {
					conflicts[a] = append(conflicts[a], o)
				}
			}
		}
	}
	return waitingOn, conflicts
}

// BenchmarkListSchedule: what EAGER's turn (domain.EagerRanks over
// domain.CriticalHours) achieves on BenchmarkSimulatedRun's graphs with an
// ideal list scheduler — no claim or completion latency, no polling — in
// units of the lower bound max(critical path, work / agents), for several
// agent counts and seeds, with and without the file conflicts (the bound
// ignores them). No server: it shows how much of a simulated run's gap is
// the schedule's own. The task order among equals is the task index (the
// planner's order follows it closely).
func BenchmarkListSchedule(b *testing.B) {
	for _, agents := range []int{4, 8, 16, 32} {
		b.Run("agents="+strconv.Itoa(agents), func(b *testing.B) {
			var withConflicts, without []float64
			for range b.N {
				withConflicts, without = withConflicts[:0], without[:0]
				for _, seed := range []uint64{42, 1, 2, 3, 4} {
					g := newSimGraph(500, seed)
					ids := make([]string, len(g.efforts))
					hours := map[string]float64{}
					for i := range ids {
						ids[i] = fmt.Sprintf("t%03d", i)
						hours[ids[i]] = g.efforts[i].hours
					}
					waitingOn, conflicts := g.rules(ids)
					critical := domain.CriticalHours(hours, waitingOn)
					rank := domain.EagerRanks(ids, critical)
					total, path := 0.0, 0.0
					for _, id := range ids {
						total, path = total+hours[id], max(path, critical[id])
					}
					bound := max(path, total/float64(agents))
					withConflicts = append(withConflicts, listSchedule(hours, waitingOn, conflicts, rank, agents, 0)/bound)
					without = append(without, listSchedule(hours, waitingOn, nil, rank, agents, 0)/bound)
				}
			}
			b.ReportMetric(slices.Max(withConflicts), "worst-ideal/bound")
			b.ReportMetric(withConflicts[0], "seed42-ideal/bound")
			b.ReportMetric(slices.Max(without), "worst-ideal-noconflicts/bound")
		})
	}
}

// listSchedule is what an ideal list scheduler makes of a run, in effort
// hours: agents take, whenever one is free, the first task in turn (rank,
// lowest first) whose dependencies have completed (waitingOn: who waits on
// whom) and none of whose conflicting tasks (conflicts, both ways) runs —
// the rules of an EAGER claim. Each task holds its agent for its hours plus
// overhead (what a claim and a completion cost, in hours), and its
// dependents wait for the whole of it. It returns the makespan.
func listSchedule(hours map[string]float64, waitingOn, conflicts map[string][]string, rank map[string]int,
	agents int, overhead float64,
) float64 {
	order := make([]string, 0, len(hours))
	for id := range hours {
		order = append(order, id)
	}
	slices.SortFunc(order, func(a, b string) int { return cmp.Or(cmp.Compare(rank[a], rank[b]), cmp.Compare(a, b)) })
	waits := map[string]int{}
	for first, ws := range waitingOn {
		if _, ok := hours[first]; !ok {
			continue
		}
		for _, w := range ws {
			if _, ok := hours[w]; ok {
				waits[w]++
			}
		}
	}
	type running struct {
		id  string
		end float64
	}
	var (
		now     float64
		busy    []running
		started = map[string]bool{}
		active  = map[string]bool{}
	)
	for len(started) < len(order) || len(busy) > 0 {
		// Hand out tasks to free agents, first in turn first.
		for len(busy) < agents {
			i := slices.IndexFunc(order, func(id string) bool {
				return !started[id] && waits[id] == 0 &&
					!slices.ContainsFunc(conflicts[id], func(o string) bool { return active[o] })
			})
			if i < 0 {
				break
			}
			id := order[i]
			started[id], active[id] = true, true
			busy = append(busy, running{id, now + hours[id] + overhead})
		}
		if len(busy) == 0 {
			break // a cycle: the rest never starts
		}
		// The next completion(s).
		slices.SortFunc(busy, func(a, b running) int { return cmp.Compare(a.end, b.end) })
		now = busy[0].end
		for len(busy) > 0 && busy[0].end == now {
			id := busy[0].id
			busy = busy[1:]
			active[id] = false
			for _, w := range waitingOn[id] {
				waits[w]--
			}
		}
	}
	return now
}
