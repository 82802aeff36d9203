package domain

import (
	"crypto/rand"
	"database/sql/driver"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// KindQuestion tags questions' global ids.
const KindQuestion Kind = "Question"

// QuestionType is what a question asks for.
type QuestionType string

const (
	QuestionValidation     QuestionType = "VALIDATION"
	QuestionApproval       QuestionType = "APPROVAL"
	QuestionDuplicateMerge QuestionType = "DUPLICATE_MERGE"
	QuestionDecision       QuestionType = "DECISION"
)

// QuestionPriority is how urgent a question is.
type QuestionPriority string

const (
	QuestionCritical QuestionPriority = "CRITICAL"
	QuestionHigh     QuestionPriority = "HIGH"
	QuestionMedium   QuestionPriority = "MEDIUM"
	QuestionLow      QuestionPriority = "LOW"
)

// QuestionStatus is where a question is in its life: PENDING until it is
// answered, expires or is skipped; the other three are final.
type QuestionStatus string

const (
	QuestionPending  QuestionStatus = "PENDING"
	QuestionAnswered QuestionStatus = "ANSWERED"
	QuestionExpired  QuestionStatus = "EXPIRED"
	QuestionSkipped  QuestionStatus = "SKIPPED"
)

// QuestionTimeoutAction is what happens to a PENDING question past its
// expiresAt.
type QuestionTimeoutAction string

const (
	// TimeoutExpire: the question becomes EXPIRED.
	TimeoutExpire QuestionTimeoutAction = "EXPIRE"
	// TimeoutUseDefault: the question is ANSWERED with its default answer,
	// by timeout, by nobody.
	TimeoutUseDefault QuestionTimeoutAction = "USE_DEFAULT"
	// TimeoutFailTask: the question becomes EXPIRED and its task FAILED.
	TimeoutFailTask QuestionTimeoutAction = "FAIL_TASK"
)

// WaitOnQuestion: the only tasks left to claim are held back by PENDING
// blocking questions.
const WaitOnQuestion WaitReason = "WAITING_ON_QUESTION"

// Limits of a question's input.
const (
	MaxQuestionText        = 10000
	MaxQuestionOptions     = 20
	MaxQuestionOptionValue = 200
	MaxQuestionOptionLabel = 200
	MaxQuestionOptionDesc  = 2000
	MaxQuestionAnswer      = 10000
	MaxQuestionReason      = 2000
	// MaxCallbackData is the size of a chat button's payload (Telegram's
	// callback_data limit).
	MaxCallbackData = 64
)

// QuestionOption is one answer a question offers.
type QuestionOption struct {
	Value       string  `json:"value"`
	Label       string  `json:"label"`
	Description *string `json:"description,omitempty"`
}

// QuestionOptions are a question's options, kept in one JSON column.
type QuestionOptions []*QuestionOption

// Value stores the options as a JSON array; nil is stored as [].
func (o QuestionOptions) Value() (driver.Value, error) {
	if o == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]*QuestionOption(o))
	return string(b), err
}

// Scan reads a JSON array column.
func (o *QuestionOptions) Scan(src any) error {
	b, err := jsonBytes(src)
	if err != nil || b == nil {
		*o = QuestionOptions{}
		return err
	}
	var out []*QuestionOption
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("scan QuestionOptions: %w", err)
	}
	if out == nil {
		out = []*QuestionOption{}
	}
	*o = out
	return nil
}

// Has reports whether value is one of the options' values.
func (o QuestionOptions) Has(value string) bool {
	return slices.ContainsFunc(o, func(op *QuestionOption) bool { return op.Value == value })
}

// Question is a question put to people (human in the loop), about a task, a
// task list or the work of a build agent.
type Question struct {
	ID                string                `db:"id"`
	ProjectID         string                `db:"project_id"`
	TaskListID        *string               `db:"task_list_id"`
	TaskID            *string               `db:"task_id"`
	RunID             *string               `db:"run_id"`
	AgentID           *string               `db:"agent_id"`
	TaskAgentID       *string               `db:"task_agent_id"`
	QuestionType      QuestionType          `db:"question_type"`
	Priority          QuestionPriority      `db:"priority"`
	QuestionText      string                `db:"question_text"`
	Options           QuestionOptions       `db:"options"`
	DefaultAnswer     *string               `db:"default_answer"`
	Blocking          bool                  `db:"blocking"`
	CallbackData      string                `db:"callback_data"`
	TelegramMessageID *string               `db:"telegram_message_id"`
	TelegramChatID    *string               `db:"telegram_chat_id"`
	Status            QuestionStatus        `db:"status"`
	Answer            *string               `db:"answer"`
	AnsweredAt        *time.Time            `db:"answered_at"`
	AnsweredByID      *string               `db:"answered_by"`
	AnsweredByTimeout bool                  `db:"answered_by_timeout"`
	SkipReason        *string               `db:"skip_reason"`
	TimeoutAction     QuestionTimeoutAction `db:"timeout_action"`
	ExpiresAt         *time.Time            `db:"expires_at"`
	CreatedAt         time.Time             `db:"created_at"`
	UpdatedAt         time.Time             `db:"updated_at"`
}

func (q *Question) GlobalID() string { return GlobalID(KindQuestion, q.ID) }

// AskQuestionInput is askQuestion's input, ids decoded.
type AskQuestionInput struct {
	AgentID    *string
	TaskID     *string
	TaskListID *string
	// TaskAgentID names the task agent asking, if any (a global id).
	TaskAgentID   *string
	QuestionType  QuestionType
	Priority      *QuestionPriority
	QuestionText  string
	Options       []*QuestionOptionInput
	DefaultAnswer *string
	Blocking      *bool
	TimeoutAction *QuestionTimeoutAction
	ExpiresAt     *time.Time
}

// QuestionOptionInput is one option of askQuestion's input.
type QuestionOptionInput struct {
	Value       string
	Label       string
	Description *string
}

// AnswerQuestionInput is answerQuestion's input: the question by id or by
// its callbackData.
type AnswerQuestionInput struct {
	ID           *string
	CallbackData *string
	Answer       string
}

// SkipQuestionInput is skipQuestion's input.
type SkipQuestionInput struct {
	ID     string
	Reason *string
}

// QuestionFilter narrows the questions query; ids are decoded.
type QuestionFilter struct {
	Status       []QuestionStatus
	Priority     []QuestionPriority
	QuestionType []QuestionType
	TaskListID   *string
	RunID        *string
	TaskID       *string
}

// QuestionsFilterInput is the filter argument of the questions query, ids
// as clients give them.
type QuestionsFilterInput struct {
	Status       []QuestionStatus
	Priority     []QuestionPriority
	QuestionType []QuestionType
	TaskListID   *string
	RunID        *string
	TaskID       *string
}

// Known reports whether each enum value is one of the contract's.
func (t QuestionType) Known() bool {
	return slices.Contains([]QuestionType{QuestionValidation, QuestionApproval, QuestionDuplicateMerge, QuestionDecision}, t)
}
func (p QuestionPriority) Known() bool {
	return slices.Contains([]QuestionPriority{QuestionCritical, QuestionHigh, QuestionMedium, QuestionLow}, p)
}
func (a QuestionTimeoutAction) Known() bool {
	return slices.Contains([]QuestionTimeoutAction{TimeoutExpire, TimeoutUseDefault, TimeoutFailTask}, a)
}

// AskRules checks askQuestion's input against the rules of a question, now
// being the database clock, and returns the question's fields (targets
// aside): trimmed text, options, defaults applied. Each violation is
// BAD_USER_INPUT naming its field.
func AskRules(in AskQuestionInput, now time.Time) (*Question, error) {
	n := 0
	for _, id := range []*string{in.AgentID, in.TaskID, in.TaskListID} {
		if id != nil {
			n++
		}
	}
	if n != 1 {
		return nil, InputError("agentId", "give exactly one of agentId, taskId and taskListId")
	}
	if !in.QuestionType.Known() {
		return nil, InputError("questionType", "unknown question type %q", in.QuestionType)
	}
	q := &Question{QuestionType: in.QuestionType, Priority: QuestionMedium, TimeoutAction: TimeoutExpire,
		Status: QuestionPending, Options: QuestionOptions{}}
	if in.Priority != nil {
		if !in.Priority.Known() {
			return nil, InputError("priority", "unknown priority %q", *in.Priority)
		}
		q.Priority = *in.Priority
	}
	if in.TimeoutAction != nil {
		if !in.TimeoutAction.Known() {
			return nil, InputError("timeoutAction", "unknown timeout action %q", *in.TimeoutAction)
		}
		q.TimeoutAction = *in.TimeoutAction
	}
	if in.Blocking != nil {
		q.Blocking = *in.Blocking
	}
	var err error
	if q.QuestionText, err = CheckText("questionText", in.QuestionText, MaxQuestionText, true); err != nil {
		return nil, err
	}
	if len(in.Options) > MaxQuestionOptions {
		return nil, InputError("options", "at most %d options", MaxQuestionOptions)
	}
	seen := map[string]bool{}
	for i, o := range in.Options {
		field := fmt.Sprintf("options.%d", i)
		if o == nil {
			return nil, InputError(field, "an option must not be null")
		}
		v, err := CheckText(field+".value", o.Value, MaxQuestionOptionValue, true)
		if err != nil {
			return nil, err
		}
		if seen[v] {
			return nil, InputError(field+".value", "option value %q is given twice: values must be unique", v)
		}
		seen[v] = true
		l, err := CheckText(field+".label", o.Label, MaxQuestionOptionLabel, true)
		if err != nil {
			return nil, err
		}
		d, err := CheckOptText(field+".description", o.Description, MaxQuestionOptionDesc)
		if err != nil {
			return nil, err
		}
		if d != nil && *d == "" {
			d = nil
		}
		q.Options = append(q.Options, &QuestionOption{Value: v, Label: l, Description: d})
	}
	if in.DefaultAnswer != nil {
		d, err := CheckText("defaultAnswer", *in.DefaultAnswer, MaxQuestionAnswer, true)
		if err != nil {
			return nil, err
		}
		if len(q.Options) > 0 && !q.Options.Has(d) {
			return nil, InputError("defaultAnswer", "the default answer %q is not one of the options' values", d)
		}
		q.DefaultAnswer = &d
	}
	switch q.TimeoutAction {
	case TimeoutUseDefault:
		if q.DefaultAnswer == nil {
			return nil, InputError("defaultAnswer", "timeoutAction USE_DEFAULT needs a defaultAnswer")
		}
	case TimeoutFailTask:
		if in.TaskListID != nil {
			return nil, InputError("timeoutAction", "timeoutAction FAIL_TASK needs a task (taskId or agentId)")
		}
	}
	if in.ExpiresAt != nil {
		at := in.ExpiresAt.UTC().Truncate(time.Microsecond)
		if !at.After(now) {
			return nil, InputError("expiresAt", "expiresAt must lie in the future")
		}
		q.ExpiresAt = &at
	}
	return q, nil
}

// DefaultMinFailTaskDelay is the least time, by default, between asking a
// FAIL_TASK question and its expiresAt: people get at least this long to
// answer before the task fails (serve --question-min-fail-delay).
const DefaultMinFailTaskDelay = time.Minute

// AnswerOutcome is what answering a question does.
type AnswerOutcome int

const (
	// AnswerRecords: the question becomes ANSWERED.
	AnswerRecords AnswerOutcome = iota
	// AnswerReplayed: the same answer again; nothing changes, no event.
	AnswerReplayed
)

// CheckAnswerText validates an answer's text against the question's options.
func CheckAnswerText(q *Question, answer string) (string, error) {
	a, err := CheckText("answer", answer, MaxQuestionAnswer, true)
	if err != nil {
		return "", err
	}
	if len(q.Options) > 0 && !q.Options.Has(a) {
		return "", InputError("answer", "%q is not one of the question's option values", a)
	}
	return a, nil
}

// AnswerRule decides an answer to q (the answer already checked): the first
// answer wins, the same answer again is a replay (also when a USE_DEFAULT
// timeout chose it), anything else CONFLICT.
func AnswerRule(q *Question, answer string) (AnswerOutcome, error) {
	switch q.Status {
	case QuestionPending:
		return AnswerRecords, nil
	case QuestionAnswered:
		if q.Answer != nil && *q.Answer == answer {
			return AnswerReplayed, nil
		}
		return 0, &Error{Code: CodeConflict, Field: "answer", Message: "the question is already answered",
			Details: map[string]any{"status": string(q.Status)}}
	default:
		return 0, &Error{Code: CodeConflict, Field: "id", Message: fmt.Sprintf("the question is %s: it takes no answer", q.Status),
			Details: map[string]any{"status": string(q.Status)}}
	}
}

// SkipRule decides skipping q: PENDING is skipped, SKIPPED again is a
// replay, ANSWERED and EXPIRED are CONFLICT.
func SkipRule(q *Question) (replay bool, err error) {
	switch q.Status {
	case QuestionPending:
		return false, nil
	case QuestionSkipped:
		return true, nil
	default:
		return false, &Error{Code: CodeConflict, Field: "id", Message: fmt.Sprintf("the question is %s: it cannot be skipped", q.Status),
			Details: map[string]any{"status": string(q.Status)}}
	}
}

// Expired reports whether a PENDING question is past its expiry at now.
func (q *Question) Expired(now time.Time) bool {
	return q.Status == QuestionPending && q.ExpiresAt != nil && !q.ExpiresAt.After(now)
}

// Expire applies q's timeout action at now: ANSWERED with the default
// (USE_DEFAULT) or EXPIRED. It returns whether the task must fail.
func (q *Question) Expire(now time.Time) (failTask bool) {
	q.UpdatedAt = now
	if q.TimeoutAction == TimeoutUseDefault && q.DefaultAnswer != nil {
		q.Status, q.Answer, q.AnsweredAt, q.AnsweredByID, q.AnsweredByTimeout = QuestionAnswered, q.DefaultAnswer, &now, nil, true
		return false
	}
	q.Status = QuestionExpired
	return q.TimeoutAction == TimeoutFailTask && q.TaskID != nil
}

// NewCallbackData is a fresh opaque callbackData: "q" and 16 random bytes
// (23 characters, room left for a button's ":<option index>").
func NewCallbackData() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("domain: no randomness: " + err.Error())
	}
	return "q" + base64.RawURLEncoding.EncodeToString(b[:])
}

// ButtonData is the payload of the button of option index of a question.
func ButtonData(callbackData string, index int) string {
	return callbackData + ":" + strconv.Itoa(index)
}

// ParseButtonData splits a button payload into callbackData and option
// index.
func ParseButtonData(s string) (callbackData string, index int, ok bool) {
	cb, idx, found := strings.Cut(s, ":")
	if !found || cb == "" || len(s) > MaxCallbackData {
		return "", 0, false
	}
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || i >= MaxQuestionOptions {
		return "", 0, false
	}
	return cb, i, true
}
