package store

import (
	"context"
	"strconv"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

const questionColumns = `id, project_id, task_list_id, task_id, run_id, agent_id, task_agent_id, question_type, priority,
	question_text, options, default_answer, blocking, callback_data, telegram_message_id, telegram_chat_id, status, answer,
	answered_at, answered_by, answered_by_timeout, skip_reason, timeout_action, expires_at, created_at, updated_at`

// InsertQuestion inserts a question.
func (q QuestionQueries) InsertQuestion(ctx context.Context, qu *domain.Question) error {
	_, err := q.namedExec(ctx, `INSERT INTO questions (`+questionColumns+`) VALUES (`+namedList(questionColumns)+`)`, qu)
	return err
}

// UpdateQuestion writes a question's outcome and chat message.
func (q QuestionQueries) UpdateQuestion(ctx context.Context, qu *domain.Question) error {
	_, err := q.namedExec(ctx, `UPDATE questions SET status = :status, answer = :answer, answered_at = :answered_at,
		answered_by = :answered_by, answered_by_timeout = :answered_by_timeout, skip_reason = :skip_reason,
		telegram_message_id = :telegram_message_id, telegram_chat_id = :telegram_chat_id, updated_at = :updated_at
		WHERE id = :id`, qu)
	return err
}

// QuestionsByIDs loads questions by id.
func (q QuestionQueries) QuestionsByIDs(ctx context.Context, ids []string) ([]*domain.Question, error) {
	return byIDs[domain.Question](ctx, q.Q, "questions", ids)
}

// QuestionForUpdate loads a question and, inside a PostgreSQL transaction,
// locks it: answers and skips of one question queue on its row.
func (q QuestionQueries) QuestionForUpdate(ctx context.Context, id string) (*domain.Question, error) {
	var out domain.Question
	if err := q.get(ctx, &out, `SELECT * FROM questions WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &out, nil
}

// QuestionIDByCallbackData finds a question by its callbackData.
func (q QuestionQueries) QuestionIDByCallbackData(ctx context.Context, data string) (string, error) {
	var id string
	err := q.get(ctx, &id, `SELECT id FROM questions WHERE callback_data = ?`, data)
	return id, err
}

// PendingQuestionForSweep locks a PENDING question unless another
// transaction holds it (SKIP LOCKED on PostgreSQL). ErrNotFound: no longer
// pending, or another sweeper has it.
func (q QuestionQueries) PendingQuestionForSweep(ctx context.Context, id string, pending domain.QuestionStatus) (*domain.Question, error) {
	var out domain.Question
	if err := q.get(ctx, &out, `SELECT * FROM questions WHERE id = ? AND status = ?`+q.skipLocked(), id, pending); err != nil {
		return nil, err
	}
	return &out, nil
}

// ExpiringQuestions lists the PENDING questions whose expiry is at or before
// now (the database clock), soonest first, at most limit.
func (q QuestionQueries) ExpiringQuestions(ctx context.Context, pending domain.QuestionStatus, now time.Time, limit int) ([]string, error) {
	var rows []struct {
		ID        string    `db:"id"`
		ExpiresAt time.Time `db:"expires_at"`
	}
	if err := q.selectx(ctx, &rows, `SELECT id, expires_at FROM questions WHERE status = ? AND expires_at IS NOT NULL
		ORDER BY expires_at, id LIMIT `+strconv.Itoa(limit), pending); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		if r.ExpiresAt.After(now) {
			break // compared here, not in SQL: SQLite keeps times as text
		}
		out = append(out, r.ID)
	}
	return out, nil
}

// PendingQuestionsOfRunForUpdate loads and locks a run's questions in status
// pending, oldest first.
func (q QuestionQueries) PendingQuestionsOfRunForUpdate(ctx context.Context, runID string, pending domain.QuestionStatus) ([]*domain.Question, error) {
	var out []*domain.Question
	err := q.selectx(ctx, &out, `SELECT * FROM questions WHERE run_id = ? AND status = ? ORDER BY created_at, id`+q.forUpdate(),
		runID, pending)
	return out, err
}

// QuestionsOf loads the questions whose column (task_id, task_list_id or
// run_id) is one of ids, newest first.
func (q QuestionQueries) QuestionsOf(ctx context.Context, column string, ids []string) ([]*domain.Question, error) {
	switch column {
	case "task_id", "task_list_id", "run_id":
	default:
		panic("store: questions by " + column) // programming error
	}
	return byColumn[domain.Question](ctx, q.Q, "questions", column, ids, "created_at DESC, id DESC")
}

// NewestPendingOfAgents loads, for each agent of ids, its newest question in
// status pending.
func (q QuestionQueries) NewestPendingOfAgents(ctx context.Context, ids []string, pending domain.QuestionStatus) ([]*domain.Question, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	query, args := in(`SELECT * FROM questions qu WHERE qu.agent_id IN (?) AND qu.status = ? AND NOT EXISTS (
		SELECT 1 FROM questions nq WHERE nq.agent_id = qu.agent_id AND nq.status = qu.status
		AND (nq.created_at > qu.created_at OR (nq.created_at = qu.created_at AND nq.id > qu.id)))`, ids, pending)
	var out []*domain.Question
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}

// PendingCounts counts, per project of ids, its questions in status pending.
func (q QuestionQueries) PendingCounts(ctx context.Context, ids []string, pending domain.QuestionStatus) (map[string]int, error) {
	out := make(map[string]int, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	query, args := in(`SELECT project_id, COUNT(*) AS n FROM questions WHERE project_id IN (?) AND status = ?
		GROUP BY project_id`, ids, pending)
	var rows []struct {
		ProjectID string `db:"project_id"`
		N         int    `db:"n"`
	}
	if err := q.selectx(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	for _, id := range ids {
		out[id] = 0
	}
	for _, r := range rows {
		out[r.ProjectID] = r.N
	}
	return out, nil
}

// Questions pages a project's questions, newest first, narrowed by f.
func (q QuestionQueries) Questions(ctx context.Context, projectID string, f domain.QuestionFilter, page domain.PageArgs) (domain.Page[*domain.Question], error) {
	pq := &pageQuery[*domain.Question]{
		selectCols: "qu.*", from: "questions qu", idCol: "qu.id",
		key:   sortKey{col: "qu.created_at", kind: keyTime, desc: true},
		keyOf: func(r *domain.Question) any { return r.CreatedAt }, idOf: func(r *domain.Question) string { return r.ID },
		page: page,
	}
	pq.filter("qu.project_id = ?", projectID)
	if len(f.Status) > 0 {
		pq.filter("qu.status IN (?)", f.Status)
	}
	if len(f.Priority) > 0 {
		pq.filter("qu.priority IN (?)", f.Priority)
	}
	if len(f.QuestionType) > 0 {
		pq.filter("qu.question_type IN (?)", f.QuestionType)
	}
	if f.TaskListID != nil {
		pq.filter("qu.task_list_id = ?", *f.TaskListID)
	}
	if f.RunID != nil {
		pq.filter("qu.run_id = ?", *f.RunID)
	}
	if f.TaskID != nil {
		pq.filter("qu.task_id = ?", *f.TaskID)
	}
	return rootPage(ctx, q.Q, pq)
}

// WaveHeldByQuestions reports whether one of a wave's PENDING tasks (taskPending
// in the task, assignPending in the assignment) a blocking question in
// status pending holds back.
func (q QuestionQueries) WaveHeldByQuestions(ctx context.Context, waveID string, assignPending domain.WaveStatus,
	taskPending domain.TaskStatus, pending domain.QuestionStatus,
) (bool, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COUNT(*) FROM wave_task_assignments a JOIN tasks t ON t.id = a.task_id
		WHERE a.wave_id = ? AND a.task_status = ? AND t.status = ? AND EXISTS (
		SELECT 1 FROM questions qu WHERE qu.task_id = t.id AND qu.status = ? AND qu.blocking)`,
		waveID, assignPending, taskPending, pending)
	return n > 0, err
}

// notHeldByQuestion is the condition, on tasks aliased t, that no blocking
// question in the status given as its parameter (PENDING) holds the task back
// from claims.
const notHeldByQuestion = ` AND NOT EXISTS (SELECT 1 FROM questions qu WHERE qu.task_id = t.id AND qu.status = ? AND qu.blocking)`

// QuestionByCallbackData loads a question by its callbackData.
func (q QuestionQueries) QuestionByCallbackData(ctx context.Context, data string) (*domain.Question, error) {
	var out domain.Question
	if err := q.get(ctx, &out, `SELECT * FROM questions WHERE callback_data = ?`, data); err != nil {
		return nil, err
	}
	return &out, nil
}

// ChatOfQuestion is the chat a question is sent to: its task list's
// telegram_chat_id, else its project owner's. ErrNotFound: neither has one.
func (q QuestionQueries) ChatOfQuestion(ctx context.Context, qu *domain.Question) (string, error) {
	var chat *string
	err := q.get(ctx, &chat, `SELECT COALESCE(
		(SELECT l.telegram_chat_id FROM task_lists l WHERE l.id = ? AND l.telegram_chat_id <> ''),
		(SELECT u.telegram_chat_id FROM projects p JOIN users u ON u.id = p.owner_id WHERE p.id = ? AND u.telegram_chat_id <> ''))`,
		qu.TaskListID, qu.ProjectID)
	if err != nil {
		return "", err
	}
	if chat == nil {
		return "", ErrNotFound
	}
	return *chat, nil
}

// SetTelegramMessage records the chat message a question was sent as.
func (q QuestionQueries) SetTelegramMessage(ctx context.Context, id, chat, messageID string) error {
	_, err := q.exec(ctx, `UPDATE questions SET telegram_chat_id = ?, telegram_message_id = ? WHERE id = ?`, chat, messageID, id)
	return err
}

// TelegramUser finds the user whose telegram_chat_id is chat, and whether
// the user holds an unrevoked token of role admin. ErrNotFound: none (or
// several: a chat is one person's).
func (q QuestionQueries) TelegramUser(ctx context.Context, chat string, admin domain.Role) (*domain.User, bool, error) {
	var users []*domain.User
	if err := q.selectx(ctx, &users, `SELECT * FROM users WHERE telegram_chat_id = ? LIMIT 2`, chat); err != nil {
		return nil, false, err
	}
	if len(users) != 1 {
		return nil, false, ErrNotFound
	}
	var n int
	if err := q.get(ctx, &n, `SELECT COUNT(*) FROM api_tokens WHERE user_id = ? AND role = ? AND revoked_at IS NULL`,
		users[0].ID, admin); err != nil {
		return nil, false, err
	}
	return users[0], n > 0, nil
}

// CountBlockingOfAgent counts the blocking questions in status pending that
// an agent asked.
func (q QuestionQueries) CountBlockingOfAgent(ctx context.Context, agentID string, pending domain.QuestionStatus) (int, error) {
	var n int
	err := q.getP(ctx, &n, `SELECT COUNT(*) FROM questions WHERE agent_id = ? AND status = ? AND blocking`, agentID, pending)
	return n, err
}
