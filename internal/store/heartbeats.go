package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// HeartbeatsByIDs loads recorded heartbeats by id.
func (q RunQueries) HeartbeatsByIDs(ctx context.Context, ids []string) ([]*domain.AgentHeartbeat, error) {
	return byIDs[domain.AgentHeartbeat](ctx, q.Q, "agent_heartbeats", ids)
}

func heartbeatPageQuery(agents []string, page domain.PageArgs) *pageQuery[*domain.AgentHeartbeat] {
	return &pageQuery[*domain.AgentHeartbeat]{
		selectCols: "h.*", from: "agent_heartbeats h", idCol: "h.id",
		key:       sortKey{col: "h.recorded_at", kind: keyTime, desc: true},
		keyOf:     func(h *domain.AgentHeartbeat) any { return h.RecordedAt },
		idOf:      func(h *domain.AgentHeartbeat) string { return h.ID },
		parentCol: "h.agent_id", parents: agents,
		parentOf: func(h *domain.AgentHeartbeat) string { return h.AgentID },
		page:     page,
	}
}

// HeartbeatsOfAgents pages the recorded heartbeats of agents, newest first
// (ties by id), one page per agent in one statement.
func (q RunQueries) HeartbeatsOfAgents(ctx context.Context, agents []string, page domain.PageArgs) (map[string]domain.Page[*domain.AgentHeartbeat], error) {
	return heartbeatPageQuery(agents, page).fetch(ctx, q.Q)
}

// CountHeartbeatsOfAgents counts the recorded heartbeats of each agent.
func (q RunQueries) CountHeartbeatsOfAgents(ctx context.Context, agents []string) (map[string]int, error) {
	return heartbeatPageQuery(agents, domain.PageArgs{}).count(ctx, q.Q)
}

// Pulse is a heartbeat that PulseAgent may record alone: the agent, who
// calls (their claim on it and the projects they may see) and what the
// heartbeat reports.
type Pulse struct {
	AgentID     string
	HeartbeatID string // the id of the heartbeat row to write
	// AnyClaimer: the caller may speak for any agent (an admin); otherwise
	// only for the agents it claimed (ClaimedBy).
	AnyClaimer      bool
	ClaimedBy       string
	Scope           domain.ProjectScope
	ProgressPercent *int
	CurrentStep     *string
	MemoryMb        *int
	CPUPercent      *float64
	// Completing: the stamp comes before a settlement (completeTask,
	// failTask), and a live agent becomes COMPLETING with it.
	Completing bool
}

// Pulsed is the agent after a pulse and its run's status.
type Pulsed struct {
	domain.BuildAgent
	RunStatus domain.RunStatus `db:"pulse_run_status"`
}

// PulseAgent records the heartbeat of a live agent that tells watchers
// nothing new — the negation of domain.HeartbeatIsNews: not the agent's
// first heartbeat, and any progress or step it reports equal to the agent's
// — when the caller may speak for it: it stamps the agent's last heartbeat
// with the database clock, counts it, writes the heartbeat's row and returns
// the agent with its run's status. On PostgreSQL that is one statement on
// the leases' pool (never waiting for a connection behind the main pool's
// transactions), which locks only the agent's row (for its own duration) and
// commits asynchronously; on SQLite one short transaction. ErrNotFound: the
// heartbeat needs the full path (the agent is not live or not the caller's,
// not visible, or the heartbeat is news); nothing was written.
func (d *DB) PulseAgent(ctx context.Context, p Pulse) (*Pulsed, error) {
	cond, args := leaseCond(p)
	cond += ` AND heartbeat_count > 0`
	if p.ProgressPercent != nil {
		cond += ` AND progress_percent = ?`
		args = append(args, *p.ProgressPercent)
	}
	if p.CurrentStep != nil {
		cond += ` AND current_step = ?`
		args = append(args, *p.CurrentStep)
	}
	set := `last_heartbeat_at = %s, heartbeat_count = heartbeat_count + 1, consecutive_missed_heartbeats = 0`
	var setArgs []any
	if p.MemoryMb != nil {
		set += `, memory_mb = ?`
		setArgs = append(setArgs, *p.MemoryMb)
	}
	if p.CPUPercent != nil {
		set += `, cpu_percent = ?`
		setArgs = append(setArgs, *p.CPUPercent)
	}
	hbArgs := []any{p.HeartbeatID, p.ProgressPercent, p.CurrentStep, p.MemoryMb, p.CPUPercent}
	var out Pulsed
	if d.dialect == Postgres {
		// The pulse commits without waiting for its WAL flush
		// (synchronous_commit off for its own implicit transaction): a
		// crash of the database may lose the last moment's pulses — a
		// liveness stamp a fraction of a second older than sent, far
		// within the missed-heartbeat window — and every heartbeat no
		// longer waits for a disk flush of its own.
		query := `WITH a AS (UPDATE build_agents SET ` + fmt.Sprintf(set, "clock_timestamp()") + ` WHERE ` + cond + `
				AND set_config('synchronous_commit', 'off', true) = 'off' RETURNING *),
			h AS (INSERT INTO agent_heartbeats (id, agent_id, run_id, task_id, status, progress_percent, current_step,
				memory_mb, cpu_percent, recorded_at)
				SELECT CAST(? AS UUID), a.id, a.run_id, a.task_id, a.status, CAST(? AS INTEGER), CAST(? AS TEXT),
					CAST(? AS INTEGER), CAST(? AS DOUBLE PRECISION), a.last_heartbeat_at FROM a)
			SELECT a.*, r.status AS pulse_run_status FROM a JOIN execution_runs r ON r.id = a.run_id`
		all := append(append(setArgs, args...), hbArgs...)
		d.statements.Add(1)
		sctx, span := d.startStatement(ctx, query, false)
		err := mapErr(sqlx.GetContext(sctx, d.lease, &out, d.lease.Rebind(query), all...))
		endStatement(span, err)
		if err != nil {
			return nil, err
		}
		return &out, nil
	}
	err := d.InTx(ctx, func(q *Q) error {
		now, err := q.Now(ctx)
		if err != nil {
			return err
		}
		query := `UPDATE build_agents SET ` + fmt.Sprintf(set, "?") + ` WHERE ` + cond + ` RETURNING *`
		if err := q.getP(ctx, &out.BuildAgent, query, append(append([]any{now}, setArgs...), args...)...); err != nil {
			return err
		}
		a := &out.BuildAgent
		if _, err := q.execP(ctx, `INSERT INTO agent_heartbeats (id, agent_id, run_id, task_id, status, progress_percent,
			current_step, memory_mb, cpu_percent, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			p.HeartbeatID, a.ID, a.RunID, a.TaskID, a.Status, p.ProgressPercent, p.CurrentStep, p.MemoryMb, p.CPUPercent,
			a.LastHeartbeatAt); err != nil {
			return err
		}
		return q.getP(ctx, &out.RunStatus, `SELECT status FROM execution_runs WHERE id = ?`, a.RunID)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// leaseCond is the condition on build_agents of a lease stamp of p: the
// agent, live, and one the caller may speak for (its claimer, or an admin)
// in the projects it may see.
func leaseCond(p Pulse) (string, []any) {
	cond := `id = ? AND status <> ?`
	args := []any{p.AgentID, domain.AgentTerminated}
	if !p.AnyClaimer {
		cond += ` AND claimed_by = ?`
		args = append(args, p.ClaimedBy)
	}
	switch {
	case p.Scope.All:
	case p.Scope.ProjectID != "":
		cond += ` AND run_id IN (SELECT r.id FROM execution_runs r WHERE r.id = build_agents.run_id AND r.project_id = ?)`
		args = append(args, p.Scope.ProjectID)
	default:
		cond += ` AND run_id IN (SELECT r.id FROM execution_runs r JOIN projects pr ON pr.id = r.project_id
			WHERE r.id = build_agents.run_id AND pr.owner_id = ?)`
		args = append(args, p.Scope.OwnerID)
	}
	return cond, args
}

// StampLease renews the lease of a live agent the caller may speak for
// (p's agent and caller; what it reports is ignored): its last heartbeat
// becomes the database clock now. A heartbeat that must take the full path
// (it is news, so it records an event and waits for the project's event
// sequence behind claims) stamps the lease first, so that the agent's
// lease never waits behind claims. On PostgreSQL one statement on the
// leases' pool, committed asynchronously; on SQLite — one writer, whose
// heartbeat transaction takes no longer — nothing. It reports whether it
// stamped; nothing is written for an agent that is not live or not the
// caller's (its call then answers LEASE_LOST or NOT_FOUND). With
// p.Completing the agent becomes COMPLETING too: watchers see it settling
// while its settlement waits for its locks.
func (d *DB) StampLease(ctx context.Context, p Pulse) (bool, error) {
	if d.dialect != Postgres {
		return false, nil
	}
	cond, args := leaseCond(p)
	set := `last_heartbeat_at = clock_timestamp()`
	if p.Completing {
		set += `, status = ?`
		args = append([]any{domain.AgentCompleting}, args...)
	}
	d.statements.Add(1)
	query := `UPDATE build_agents SET ` + set + ` WHERE ` + cond
	ctx, span := d.startStatement(ctx, query, false)
	res, err := d.lease.ExecContext(ctx, d.lease.Rebind(query), args...)
	err = mapErr(err)
	endStatement(span, err)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// StampClaim starts the lease of an agent whose claim has committed: its
// last heartbeat becomes the database clock now, unless it heartbeated
// already or ended. The claim's transaction stamped the agent when it took
// its task, but may have waited long after that for its commit (the
// project's event sequence, held by other claims through their commits):
// the lease runs from the commit, not from before the wait. On PostgreSQL
// one statement on the leases' pool, committed asynchronously; on SQLite —
// one writer, which commits a claim as soon as it stamped it — nothing.
func (d *DB) StampClaim(ctx context.Context, agentID string) (*time.Time, error) {
	if d.dialect != Postgres {
		return nil, nil
	}
	var at []time.Time
	d.statements.Add(1)
	query := `UPDATE build_agents SET last_heartbeat_at = clock_timestamp()
		WHERE id = ? AND status <> ? AND heartbeat_count = 0 RETURNING last_heartbeat_at`
	ctx, span := d.startStatement(ctx, query, false)
	err := mapErr(sqlx.SelectContext(ctx, d.lease, &at, d.lease.Rebind(query), agentID, domain.AgentTerminated))
	endStatement(span, err)
	if err != nil {
		return nil, err
	}
	if len(at) == 0 {
		return nil, nil
	}
	t := at[0].UTC().Truncate(time.Microsecond)
	return &t, nil
}
