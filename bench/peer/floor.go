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
	"syscall"
	"time"

	"github.com/lib/pq"
)

// The floor: what answering the nested read and the insert costs with no
// GraphQL at all — a plain HTTP handler that reads the operation name and
// variables, runs one batched SQL statement per level of the read (tasks,
// relationships, targets, file impacts) or one INSERT, and writes the answer
// with encoding/json in Taskgraph's shape. It parses no query text, checks
// no token and keeps no history: a lower bound, not a competitor.

// Prepared once per connection by database/sql.
const (
	floorTasksSQL = `SELECT t.id, t.display_id, t.title, t.status
		FROM task_list_items i JOIN tasks t ON t.id = i.task_id
		WHERE i.task_list_id = $1 ORDER BY i.position LIMIT $2`
	floorRelsSQL = `SELECT id, source_task_id, target_task_id, relationship_type
		FROM task_relationships WHERE source_task_id = ANY($1) ORDER BY id`
	floorTargetsSQL = `SELECT id, display_id, title, status FROM tasks WHERE id = ANY($1)`
	floorImpactsSQL = `SELECT id, task_id, file_path, operation
		FROM task_file_impacts WHERE task_id = ANY($1) ORDER BY id`
	floorInsertSQL = `INSERT INTO tasks (id, display_id, user_id, project_id, title, description,
		category, status, risk_level, priority, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id, display_id`
)

// floorMaxBody bounds a request body.
const floorMaxBody = 1 << 20

type floorServer struct {
	tasks, rels, targets, impacts, insert *sql.Stmt
}

// The answer's shape: Taskgraph's, field for field.
type (
	floorTask struct {
		ID            string        `json:"id"`
		DisplayID     string        `json:"displayId"`
		Title         string        `json:"title"`
		Status        string        `json:"status"`
		Relationships []floorRel    `json:"relationships"`
		FileImpacts   []floorImpact `json:"fileImpacts"`
	}
	floorTarget struct {
		ID          string        `json:"id"`
		DisplayID   string        `json:"displayId"`
		Title       string        `json:"title"`
		Status      string        `json:"status"`
		FileImpacts []floorImpact `json:"fileImpacts"`
	}
	floorRel struct {
		ID     string       `json:"id"`
		Type   string       `json:"type"`
		Target *floorTarget `json:"target"`
	}
	floorImpact struct {
		ID        string `json:"id"`
		FilePath  string `json:"filePath"`
		Operation string `json:"operation"`
	}
	floorReadAnswer struct {
		Data struct {
			TaskList *struct {
				Tasks struct {
					Nodes []*floorTask `json:"nodes"`
				} `json:"tasks"`
			} `json:"taskList"`
		} `json:"data"`
	}
)

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
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dbURL == "" {
		return errors.New("floor: --database is required")
	}
	db, err := sql.Open("postgres", *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	f := &floorServer{}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&f.tasks, floorTasksSQL}, {&f.rels, floorRelsSQL}, {&f.targets, floorTargetsSQL}, {&f.impacts, floorImpactsSQL}, {&f.insert, floorInsertSQL}} {
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
	case req.OperationName == "NestedRead":
		var v struct {
			ID    string `json:"id"`
			First int    `json:"first"`
		}
		if err = json.Unmarshal(req.Variables, &v); err == nil {
			answer, err = f.read(r.Context(), v.ID, v.First)
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

// read answers the nested read with four statements.
func (f *floorServer) read(ctx context.Context, listID string, first int) (*floorReadAnswer, error) {
	if first < 0 || first > 1000 {
		return nil, fmt.Errorf("first must be 0..1000")
	}
	var ans floorReadAnswer
	rows, err := f.tasks.QueryContext(ctx, listID, first)
	if err != nil {
		return nil, err
	}
	ans.Data.TaskList = &struct {
		Tasks struct {
			Nodes []*floorTask `json:"nodes"`
		} `json:"tasks"`
	}{}
	tasks := make([]*floorTask, 0, first)
	byID := map[string]*floorTask{}
	for rows.Next() {
		t := &floorTask{Relationships: []floorRel{}, FileImpacts: []floorImpact{}}
		if err := rows.Scan(&t.ID, &t.DisplayID, &t.Title, &t.Status); err != nil {
			rows.Close()
			return nil, err
		}
		tasks = append(tasks, t)
		byID[t.ID] = t
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ans.Data.TaskList.Tasks.Nodes = tasks
	if len(tasks) == 0 {
		return &ans, nil
	}

	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	type relRow struct{ id, source, target, typ string }
	var rels []relRow
	if rows, err = f.rels.QueryContext(ctx, pq.Array(ids)); err != nil {
		return nil, err
	}
	targetIDs := []string{}
	seen := map[string]bool{}
	for rows.Next() {
		var r relRow
		if err := rows.Scan(&r.id, &r.source, &r.target, &r.typ); err != nil {
			rows.Close()
			return nil, err
		}
		rels = append(rels, r)
		if !seen[r.target] {
			seen[r.target] = true
			targetIDs = append(targetIDs, r.target)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}

	targets := map[string]*floorTarget{}
	if len(targetIDs) > 0 {
		if rows, err = f.targets.QueryContext(ctx, pq.Array(targetIDs)); err != nil {
			return nil, err
		}
		for rows.Next() {
			t := &floorTarget{FileImpacts: []floorImpact{}}
			if err := rows.Scan(&t.ID, &t.DisplayID, &t.Title, &t.Status); err != nil {
				rows.Close()
				return nil, err
			}
			targets[t.ID] = t
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	for _, r := range rels {
		src, tgt := byID[r.source], targets[r.target]
		if src == nil || tgt == nil {
			return nil, fmt.Errorf("relationship %s: its task is missing", r.id)
		}
		src.Relationships = append(src.Relationships, floorRel{ID: r.id, Type: r.typ, Target: tgt})
	}

	// One statement for the impacts of tasks and targets: a task that is
	// also a target gets its impacts in both places.
	all := append(ids, targetIDs...)
	if rows, err = f.impacts.QueryContext(ctx, pq.Array(all)); err != nil {
		return nil, err
	}
	for rows.Next() {
		var im floorImpact
		var taskID string
		if err := rows.Scan(&im.ID, &taskID, &im.FilePath, &im.Operation); err != nil {
			rows.Close()
			return nil, err
		}
		if t := byID[taskID]; t != nil {
			t.FileImpacts = append(t.FileImpacts, im)
		}
		if t := targets[taskID]; t != nil {
			t.FileImpacts = append(t.FileImpacts, im)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return &ans, nil
}

// create inserts one task row.
func (f *floorServer) create(ctx context.Context, t floorNewTask) (any, error) {
	var id, displayID string
	err := f.insert.QueryRowContext(ctx, t.ID, t.DisplayID, t.UserID, t.ProjectID, t.Title, t.Description,
		t.Category, t.Status, t.RiskLevel, t.Priority, t.CreatedAt, t.UpdatedAt).Scan(&id, &displayID)
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
