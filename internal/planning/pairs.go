package planning

import (
	"cmp"
	"slices"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// Pair is one pair of planned tasks that must never share a wave, with every
// reason: the direct ordering links between them, the files they both touch
// with a conflicting pair of operations, and the CONFLICTS_WITH links. A is the
// task with the smaller id (the canonical order of a stored pair), B the other.
type Pair struct {
	A, B         string
	Dependencies []Link     // DEPENDS_ON / BLOCKS links between A and B
	Files        []PairFile // by path
	Resources    []Link     // CONFLICTS_WITH links between A and B
}

// PairFile is a file both tasks of a pair touch: A's operation, then B's.
type PairFile struct {
	Path     string
	OpA, OpB domain.FileOperation
}

// Types lists the kinds of conflict of the pair, strongest first.
func (p *Pair) Types() []domain.ConflictType {
	var out []domain.ConflictType
	if len(p.Dependencies) > 0 {
		out = append(out, domain.ConflictDependency)
	}
	if len(p.Files) > 0 {
		out = append(out, domain.ConflictFile)
	}
	if len(p.Resources) > 0 {
		out = append(out, domain.ConflictResource)
	}
	return out
}

// Pairs lists the pairs of planned tasks (tasks in p's waves) that conflict,
// by (A, B): the plan's FILE_CONFLICT and RESOURCE_CONFLICT conflicts, and —
// unlike Plan.Conflicts, where the waves themselves show the order — the
// DEPENDENCY pairs, tasks joined by a direct DEPENDS_ON or BLOCKS link. in must
// be the input p was computed from. keep, when not nil, limits the pairs to
// tasks it accepts (a retry run plans only its unfinished tasks).
func Pairs(in Input, p *Plan, keep func(taskID string) bool) []Pair {
	planned := p.WaveOf()
	ok := func(id string) bool {
		_, in := planned[id]
		return in && (keep == nil || keep(id))
	}
	byPair := map[[2]string]*Pair{}
	get := func(x, y string) (pr *Pair, swapped bool) {
		key, swapped := [2]string{x, y}, false
		if y < x {
			key, swapped = [2]string{y, x}, true
		}
		if pr = byPair[key]; pr == nil {
			pr = &Pair{A: key[0], B: key[1]}
			byPair[key] = pr
		}
		return pr, swapped
	}
	for _, l := range in.Links {
		if l.Source == l.Target || !ok(l.Source) || !ok(l.Target) {
			continue
		}
		switch l.Type {
		case domain.RelDependsOn, domain.RelBlocks:
			pr, _ := get(l.Source, l.Target)
			if !slices.Contains(pr.Dependencies, l) {
				pr.Dependencies = append(pr.Dependencies, l)
			}
		case domain.RelConflictsWith:
			pr, _ := get(l.Source, l.Target)
			if !slices.Contains(pr.Resources, l) {
				pr.Resources = append(pr.Resources, l)
			}
		}
	}
	for _, c := range p.Conflicts {
		if c.Type != domain.ConflictFile || c.FilePath == nil || len(c.Operations) != 2 || !ok(c.A) || !ok(c.B) {
			continue
		}
		pr, swapped := get(c.A, c.B)
		f := PairFile{Path: *c.FilePath, OpA: c.Operations[0], OpB: c.Operations[1]}
		if swapped {
			f.OpA, f.OpB = f.OpB, f.OpA
		}
		pr.Files = append(pr.Files, f)
	}
	out := make([]Pair, 0, len(byPair))
	for _, pr := range byPair {
		byLink := func(x, y Link) int {
			return cmp.Or(cmp.Compare(x.Type, y.Type), cmp.Compare(x.Source, y.Source), cmp.Compare(x.Target, y.Target))
		}
		slices.SortFunc(pr.Dependencies, byLink)
		slices.SortFunc(pr.Resources, byLink)
		slices.SortFunc(pr.Files, func(x, y PairFile) int { return cmp.Compare(x.Path, y.Path) })
		out = append(out, *pr)
	}
	slices.SortFunc(out, func(x, y Pair) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	return out
}
