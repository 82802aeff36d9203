package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// The tail of a transaction. The rows that every transaction of a busy
// project writes are written last, under the project's event sequence
// (numbering the events takes it), which each transaction holds for its
// last statement and the commit only: the events, a list's counters
// (CountListMove) and a run's wave counters (CountWaveMove) — one statement
// per project on PostgreSQL (store.Q.AppendTail). Writers take turns on the
// sequence, so those rows are never waited for. The exception is a list row
// that a transaction locked mid-way (adding tasks to the list, starting a
// run) before it waits for the sequence: the tail does not wait for it
// (store.ErrBusy) and the runner reruns the transaction with its list
// counters written before the sequence, as that one does.
//
// A use-case that must decide under the sequence and record events from
// what it sees (advancing a run reads its waves and writes them) takes it
// mid-way: HoldEvents, which also writes the wave counters moved so far.

// tail is what a transaction writes last.
type tail struct {
	lists map[string]*listMove
	waves map[string]*waveMove
	// held: the projects whose event sequence the transaction holds.
	held map[string]bool
	// listsFirst: write list counters before taking an event sequence, and
	// wait for their rows (the rerun of a transaction that found one busy).
	listsFirst bool
}

// listMove is what a transaction changes in one list's counters.
type listMove struct {
	project string
	delta   store.ListDelta
}

// waveMove is what a transaction changes in one wave's counters, and who
// wants to hear that the change closed the wave.
type waveMove struct {
	project string
	delta   store.WaveDelta
	closed  func()
}

// CountListMove notes that a task of list listID (of project projectID)
// moved from one status to another at at: the list's counters of completed
// and failed tasks change by domain.ListCountDelta, written in the tail.
func (tx *Tx) CountListMove(projectID, listID string, from, to domain.TaskStatus, at time.Time) {
	completed, failed := domain.ListCountDelta(from, to)
	if completed == 0 && failed == 0 {
		return
	}
	if tx.tail.lists == nil {
		tx.tail.lists = map[string]*listMove{}
	}
	m := tx.tail.lists[listID]
	if m == nil {
		m = &listMove{project: projectID, delta: store.ListDelta{ListID: listID}}
		tx.tail.lists[listID] = m
	}
	m.delta.Completed, m.delta.Failed = m.delta.Completed+completed, m.delta.Failed+failed
	if at.After(m.delta.At) {
		m.delta.At = at
	}
}

// CountWaveMove notes that a task's place in wave waveID (of a run of
// project projectID) moved from an open status to the status to: the
// wave's counters change by domain.WaveCountDelta, written under the
// project's event sequence — the tail, or at once when the transaction
// holds it (HoldEvents). Of the transactions that close a wave's last open
// places, the last sees the wave with none left: closed is called for it
// (before the commit) when the wave is not over yet.
func (tx *Tx) CountWaveMove(projectID, waveID string, to domain.WaveStatus, closed func()) {
	c, f, k := domain.WaveCountDelta(domain.WavePending, to)
	if tx.tail.waves == nil {
		tx.tail.waves = map[string]*waveMove{}
	}
	m := tx.tail.waves[waveID]
	if m == nil {
		m = &waveMove{project: projectID, delta: store.WaveDelta{WaveID: waveID}}
		tx.tail.waves[waveID] = m
	}
	m.delta.Completed, m.delta.Failed, m.delta.Skipped = m.delta.Completed+c, m.delta.Failed+f, m.delta.Skipped+k
	if closed != nil {
		prev := m.closed
		m.closed = func() {
			if prev != nil {
				prev()
			}
			closed()
		}
	}
}

// HoldEvents takes project's event sequence now, for a use-case that must
// decide under it and record events from what it sees: it locks the
// sequence until the transaction ends (a project without events yet has
// none to lock) and writes the project's wave counters moved so far.
func (tx *Tx) HoldEvents(ctx context.Context, projectID string) error {
	if !tx.tail.held[projectID] {
		if tx.tail.listsFirst {
			if err := tx.writeLists(ctx); err != nil {
				return err
			}
		}
		if err := tx.Events.HoldSequence(ctx, projectID); err != nil {
			return err
		}
		tx.markHeld(projectID)
	}
	waves := tx.takeWaves(projectID)
	if len(waves) == 0 {
		return nil
	}
	counts, err := tx.AppendTail(ctx, projectID, nil, nil, false, deltas(waves), false)
	if err != nil {
		return err
	}
	tellClosed(waves, counts)
	return nil
}

func (tx *Tx) markHeld(projectID string) {
	if tx.tail.held == nil {
		tx.tail.held = map[string]bool{}
	}
	tx.tail.held[projectID] = true
}

// writeLists writes every list move, waiting for the rows (listsFirst).
func (tx *Tx) writeLists(ctx context.Context) error {
	ids := make([]string, 0, len(tx.tail.lists))
	for id := range tx.tail.lists {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		d := tx.tail.lists[id].delta
		if err := tx.Lists.AddListCounts(ctx, id, d.Completed, d.Failed, d.At, false); err != nil {
			return err
		}
	}
	clear(tx.tail.lists)
	return nil
}

// takeWaves removes and returns project's wave moves, in wave id order.
func (tx *Tx) takeWaves(projectID string) []*waveMove {
	var out []*waveMove
	for id, m := range tx.tail.waves {
		if m.project == projectID {
			out = append(out, m)
			delete(tx.tail.waves, id)
		}
	}
	slices.SortFunc(out, func(a, b *waveMove) int { return strings.Compare(a.delta.WaveID, b.delta.WaveID) })
	return out
}

func deltas(ms []*waveMove) []store.WaveDelta {
	out := make([]store.WaveDelta, len(ms))
	for i, m := range ms {
		out[i] = m.delta
	}
	return out
}

// tellClosed calls closed for each moved wave the counts show with no open
// task left but not over yet.
func tellClosed(ms []*waveMove, counts []store.WaveCounts) {
	byID := map[string]*waveMove{}
	for _, m := range ms {
		byID[m.delta.WaveID] = m
	}
	for _, c := range counts {
		m := byID[c.ID]
		if w := c.Wave(); m != nil && m.closed != nil && !w.Tally().Open && !w.Status.Finished() {
			m.closed()
		}
	}
}

// writeTail writes the transaction's tail, project by project in id order
// (one lock order for every transaction).
func (tx *Tx) writeTail(ctx context.Context) error {
	if tx.tail.listsFirst {
		if err := tx.writeLists(ctx); err != nil {
			return err
		}
	}
	evs := map[string][]*domain.Event{}
	for _, e := range tx.events {
		evs[e.ProjectID] = append(evs[e.ProjectID], e)
	}
	lists := map[string][]store.ListDelta{}
	for _, m := range tx.tail.lists {
		lists[m.project] = append(lists[m.project], m.delta)
	}
	var projects []string
	for p := range evs {
		projects = append(projects, p)
	}
	for p := range lists {
		projects = append(projects, p)
	}
	for _, m := range tx.tail.waves {
		projects = append(projects, m.project)
	}
	slices.Sort(projects)
	projects = slices.Compact(projects)
	for i, p := range projects {
		waves := tx.takeWaves(p)
		// The last tail is the transaction's last statement: it commits.
		counts, err := tx.AppendTail(ctx, p, evs[p], lists[p], true, deltas(waves), i == len(projects)-1)
		if err != nil {
			return err
		}
		tellClosed(waves, counts)
	}
	return nil
}
