package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// The lifecycle of task lists as it is acted on: setTaskListStatus, the moves
// a run causes (in the run's transaction), the AUTO run of an autoExecute list
// and the SCHEDULE runs of a list's runSchedule. The rules are domain's
// (list_rules.go).

// maxReason bounds a reason given to setTaskListStatus.
const maxReason = 2000

// SetTaskListStatus moves a list by hand: DRAFT ⇄ READY, or to ARCHIVED when
// no run of it is active. An autoExecute list moved to READY starts a run
// (AUTO) in the same transaction.
func (s *Lists) SetTaskListStatus(ctx context.Context, in domain.SetTaskListStatusInput) (*domain.TaskList, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.writableList(ctx, p, in.ID, "id")
	if err != nil {
		return nil, err
	}
	var reason *string
	if in.Reason != nil {
		r, err := domain.CheckText("reason", *in.Reason, maxReason, false)
		if err != nil {
			return nil, err
		}
		reason = &r
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		cur, err := tx.Lists.TaskListForUpdate(ctx, l.ID)
		if err != nil {
			return app.NotFound(err, "task list")
		}
		active := true
		if _, err := tx.Runs.ActiveRunOfList(ctx, cur.ID); errors.Is(err, store.ErrNotFound) {
			active = false
		} else if err != nil {
			return err
		}
		if err := domain.CheckListMoveByHand(cur.Status, in.Status, active); err != nil {
			return err
		}
		now := s.now()
		tx.Record(domain.MoveList(cur, in.Status, reason, nil, now))
		if err := tx.Lists.SetTaskListStatus(ctx, cur); err != nil {
			return err
		}
		if in.Status != domain.ListReady || !cur.AutoExecute {
			return nil
		}
		// One transaction with the move, under the list's lock, and at most one
		// active run per list (a unique index): one AUTO run, whichever replica.
		_, err = s.Runs.startRun(ctx, tx, p, cur.ID, domain.TriggerAuto, ptr("autoExecute: the list became READY"), nil, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.load(ctx).lists.Get(ctx, l.ID)
}

// moveListForRun moves run's list as the run's move says, inside the run's
// transaction: IN_PROGRESS when it starts or resumes, PAUSED when it pauses,
// and at its end COMPLETED (the run completed and so did every task of the
// list) or READY.
func (s *Runs) moveListForRun(ctx context.Context, tx *app.Tx, run *domain.ExecutionRun, move domain.ListMove,
	reason *string, now time.Time,
) error {
	l, err := tx.Lists.TaskListForStatus(ctx, run.TaskListID)
	if err != nil {
		return err
	}
	allDone := false
	if move == domain.ListMoveRunEnd && run.Status == domain.RunCompleted {
		n, err := tx.Lists.UnfinishedTasksOfList(ctx, l.ID)
		if err != nil {
			return err
		}
		allDone = n == 0
	}
	to, moves := domain.ListStatusAfterRun(l.Status, move, allDone)
	if !moves {
		return nil
	}
	if reason == nil {
		reason = ptr(fmt.Sprintf("execution run %d %s", run.RunNumber, strings.ToLower(string(run.Status))))
	}
	tx.Record(domain.MoveList(l, to, reason, &run.ID, now))
	return tx.Lists.SetTaskListStatus(ctx, l)
}

// cronParser reads 5-field cron expressions (minute hour day-of-month month
// day-of-week), nothing else.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// checkRunSchedule parses a runSchedule: nil and "" mean none.
func checkRunSchedule(expr *string) (*string, cron.Schedule, error) {
	if expr == nil {
		return nil, nil, nil
	}
	e := strings.TrimSpace(*expr)
	if e == "" {
		return nil, nil, nil
	}
	if len(e) > domain.MaxRunSchedule {
		return nil, nil, domain.InputError("runSchedule", "runSchedule is longer than %d bytes", domain.MaxRunSchedule)
	}
	sched, err := cronParser.Parse(e)
	if err != nil {
		return nil, nil, domain.InputError("runSchedule",
			"runSchedule %q is not a 5-field cron expression (minute hour day-of-month month day-of-week, UTC): %v", e, err)
	}
	return &e, sched, nil
}

// nextTick is sched's first tick after now, in UTC at the database's
// precision; nil without a schedule or when it never ticks again.
func nextTick(sched cron.Schedule, now time.Time) *time.Time {
	if sched == nil {
		return nil
	}
	n := sched.Next(now.UTC())
	if n.IsZero() {
		return nil
	}
	n = n.UTC().Truncate(time.Microsecond)
	return &n
}

// scheduleBatch bounds the lists one schedule sweep examines.
const scheduleBatch = 200

// RunScheduleSweep starts the SCHEDULE runs that are due every interval until
// ctx ends. Every replica runs it: a due tick is claimed by a conditional
// UPDATE of the list's next scheduled run in the transaction that starts the
// run, so one replica starts it.
func (s *Runs) RunScheduleSweep(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.SweepSchedules(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "schedule sweep failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SweepSchedules starts a SCHEDULE run of every list whose next scheduled
// run is due, and moves that to the schedule's next tick after now — ticks
// missed while no replica ran give one run. A list that has an active run or
// no unfinished task gets no run; its tick moves on all the same. It returns
// how many runs it started.
func (s *Runs) SweepSchedules(ctx context.Context) (int, error) {
	due, err := s.db.DueScheduledLists(ctx, s.now(), scheduleBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range due {
		started, err := s.runScheduled(ctx, d)
		if err != nil {
			if ctx.Err() != nil {
				return n, err
			}
			s.log.WarnContext(ctx, "scheduled run not started", "taskList", domain.GlobalID(domain.KindTaskList, d.ID),
				"err", err)
			continue
		}
		if started {
			n++
		}
	}
	return n, nil
}

// runScheduled claims list d's due tick and starts its run, in one
// transaction; a run the list refuses (nothing the gate lets run, …) leaves
// the tick claimed, in a transaction of its own.
func (s *Runs) runScheduled(ctx context.Context, d store.ScheduledList) (bool, error) {
	started := false
	var runErr error
	attempt := func(start bool) error {
		return s.tx(ctx, func(tx *app.Tx) error {
			started, runErr = false, nil
			l, err := tx.Lists.TaskListForUpdate(ctx, d.ID)
			if errors.Is(err, store.ErrNotFound) {
				return nil
			} else if err != nil {
				return err
			}
			if l.NextScheduledRunAt == nil || !l.NextScheduledRunAt.Equal(d.Next) || l.RunSchedule == nil {
				return nil // another replica took the tick, or the schedule changed
			}
			_, sched, err := checkRunSchedule(l.RunSchedule)
			if err != nil {
				return err
			}
			now := s.now()
			next := nextTick(sched, now)
			if next == nil {
				next = ptr(now.AddDate(100, 0, 0))
			}
			ok, err := tx.Lists.ClaimScheduledTick(ctx, l.ID, *l.NextScheduledRunAt, *next)
			if err != nil || !ok {
				return err
			}
			if !start || l.Status == domain.ListArchived {
				return nil
			}
			if _, err := tx.Runs.ActiveRunOfList(ctx, l.ID); err == nil {
				return nil
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if n, err := tx.Lists.UnfinishedTasksOfList(ctx, l.ID); err != nil || n == 0 {
				return err
			}
			reason := ptr("runSchedule " + *l.RunSchedule + ": tick of " + d.Next.UTC().Format(time.RFC3339))
			if _, err := s.startRun(ctx, tx, engine, l.ID, domain.TriggerSchedule, reason, nil, nil); err != nil {
				runErr = err
				return err
			}
			started = true
			return nil
		})
	}
	err := attempt(true)
	if err != nil && runErr != nil && domain.ErrorCode(runErr) != "" {
		// The list refused the run: the tick is over all the same.
		if err := attempt(false); err != nil {
			return false, err
		}
		return false, runErr
	}
	return started, err
}
