package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
)

// The floor: what answering the nested reads and the insert costs with no
// GraphQL at all — a plain HTTP handler that reads the operation name and
// variables, runs one batched SQL statement per level of the read shape
// (floor_read.go) or one INSERT, and writes the answer with encoding/json in
// Taskgraph's shape. It parses no query text, checks
// no token and keeps no history: a lower bound, not a competitor.

// floorInsertSQL is the insert, prepared once per connection by
// database/sql (the reads' statements are in floor_read.go).
const (
	floorInsertSQL = `INSERT INTO tasks (id, display_id, user_id, project_id, title, description,
		category, status, risk_level, priority, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id, display_id`

	// floorWritesSQL is the floor with Taskgraph's writes (-writes
	// taskgraph): what any server keeping Taskgraph's promises must write
	// for a create — the category's next display number, the task, its
	// history row, and its event under the project's next sequence number
	// (events are resumable by that number, so a project's creates commit
	// in its order) — in one statement: one round trip, one commit. It
	// checks no rule and notifies no listener: a lower bound for
	// Taskgraph's createTask, as the plain INSERT is one for PostGraphile's.
	floorWritesSQL = `WITH n AS (
		INSERT INTO display_id_counters (project_id, category, last_value) VALUES ($4::uuid, $7::text, 1)
		ON CONFLICT (project_id, category) DO UPDATE SET last_value = display_id_counters.last_value + 1
		RETURNING last_value),
	t AS (
		INSERT INTO tasks (id, display_id, user_id, project_id, title, description,
			category, status, risk_level, priority, created_at, updated_at)
		SELECT $1::uuid, $2::text || '-' || n.last_value, $3::uuid, $4::uuid, $5::text, $6::text, $7::text, $8::text,
			$9::text, $10::text, $11::timestamptz, $12::timestamptz FROM n
		RETURNING id, display_id),
	h AS (
		INSERT INTO task_state_history (id, task_id, to_status, reason, changed_by, changed_at)
		SELECT $13::uuid, t.id, $8::text, 'created', $3::uuid::text, $11::timestamptz FROM t),
	s AS (
		INSERT INTO event_sequences (project_id, last_seq) VALUES ($4::uuid, 1)
		ON CONFLICT (project_id) DO UPDATE SET last_seq = event_sequences.last_seq + 1
		RETURNING last_seq),
	e AS (
		INSERT INTO events (project_id, seq, task_id, type, payload, occurred_at)
		SELECT $4::uuid, s.last_seq, t.id, 'TASK_CREATED', jsonb_build_object('title', $5::text, 'status', $8::text),
			$11::timestamptz FROM s, t)
	SELECT id, display_id FROM t`
)

// floorMaxBody bounds a request body.
const floorMaxBody = 1 << 20

type floorServer struct {
	tasks, rels, targets, impacts, wideRows, insert *sql.Stmt
	writes                                          bool // -writes taskgraph: insert runs floorWritesSQL
}

// floorNewTask is the insert's input, as PostGraphile 4's TaskInput.
type floorNewTask struct {
	ID          string    `json:"id"`
	DisplayID   string    `json:"displayId"`
	UserID      string    `json:"userId"`
	ProjectID   string    `json:"projectId"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Category    string    `json:"category"`
	Status      string    `json:"status"`
	RiskLevel   string    `json:"riskLevel"`
	Priority    string    `json:"priority"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// runFloor serves the floor until interrupted: peer floor -addr A -database URL.
func runFloor(args []string) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	dbURL := fs.String("database", "", "PostgreSQL URL")
	writes := fs.String("writes", "insert", "what createTask writes: insert (the task row) or taskgraph (Taskgraph's writes: display number, task, history row, event)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dbURL == "" {
		return errors.New("floor: --database is required")
	}
	if *writes != "insert" && *writes != "taskgraph" {
		return fmt.Errorf("floor: -writes %q: insert or taskgraph", *writes)
	}
	db, err := sql.Open("postgres", *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	f := &floorServer{writes: *writes == "taskgraph"}
	insertSQL := floorInsertSQL
	if f.writes {
		insertSQL = floorWritesSQL
	}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&f.tasks, floorTasksSQL}, {&f.rels, floorRelsSQL}, {&f.targets, floorTargetsSQL}, {&f.impacts, floorImpactsSQL}, {&f.wideRows, floorWideSQL}, {&f.insert, insertSQL}} {
		if *p.stmt, err = db.Prepare(p.sql); err != nil {
			return fmt.Errorf("floor: preparing %q: %w", p.sql, err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: *addr, Handler: f, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	log.Printf("floor listening on %s", *addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (f *floorServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, floorMaxBody+1))
	if err != nil || len(body) > floorMaxBody {
		http.Error(w, "unreadable or too large body", http.StatusBadRequest)
		return
	}
	var req struct {
		Query         string          `json:"query"`
		OperationName string          `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		floorError(w, http.StatusBadRequest, err)
		return
	}
	var answer any
	switch {
	case strings.HasPrefix(req.OperationName, "Read"):
		var v struct {
			ID    string `json:"id"`
			First int    `json:"first"`
		}
		if err = json.Unmarshal(req.Variables, &v); err == nil {
			answer, err = f.readShape(r.Context(), req.OperationName, v.ID, v.First)
		}
	case req.OperationName == "CreateTask":
		var v struct {
			Task floorNewTask `json:"task"`
		}
		if err = json.Unmarshal(req.Variables, &v); err == nil {
			answer, err = f.create(r.Context(), v.Task)
		}
	case req.Query == "{ __typename }":
		answer = map[string]any{"data": map[string]string{"__typename": "Query"}}
	default:
		err = fmt.Errorf("unknown operation %q", req.OperationName)
	}
	if err != nil {
		floorError(w, http.StatusOK, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

func floorError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"message": err.Error()}}})
}

// create inserts one task row, or makes Taskgraph's writes (-writes
// taskgraph; the display id is then the request's with the number taken).
func (f *floorServer) create(ctx context.Context, t floorNewTask) (any, error) {
	args := []any{t.ID, t.DisplayID, t.UserID, t.ProjectID, t.Title, t.Description,
		t.Category, t.Status, t.RiskLevel, t.Priority, t.CreatedAt, t.UpdatedAt}
	if f.writes {
		args = append(args, uuid.NewString())
	}
	var id, displayID string
	err := f.insert.QueryRowContext(ctx, args...).Scan(&id, &displayID)
	if err != nil {
		return nil, err
	}
	type task struct {
		ID        string `json:"id"`
		DisplayID string `json:"displayId"`
	}
	var ans struct {
		Data struct {
			CreateTask struct {
				Task task `json:"task"`
			} `json:"createTask"`
		} `json:"data"`
	}
	ans.Data.CreateTask.Task = task{id, displayID}
	return ans, nil
}
