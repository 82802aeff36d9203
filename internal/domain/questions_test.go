package domain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAskRules(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	id := "x"
	str := func(s string) *string { return &s }
	act := func(a QuestionTimeoutAction) *QuestionTimeoutAction { return &a }
	yesNo := []*QuestionOptionInput{{Value: "yes", Label: "Yes"}, {Value: "no", Label: "No"}}
	past, future := now.Add(-time.Second), now.Add(time.Minute)
	for _, c := range []struct {
		name  string
		in    AskQuestionInput
		field string // "" = valid
	}{
		{"task", AskQuestionInput{TaskID: &id}, ""},
		{"no target", AskQuestionInput{}, "agentId"},
		{"two targets", AskQuestionInput{TaskID: &id, AgentID: &id}, "agentId"},
		{"unknown type", AskQuestionInput{TaskID: &id, QuestionType: "NOPE"}, "questionType"},
		{"blank text", AskQuestionInput{TaskID: &id, QuestionText: " "}, "questionText"},
		{"duplicate values", AskQuestionInput{TaskID: &id, Options: []*QuestionOptionInput{{Value: "a", Label: "A"}, {Value: " a ", Label: "B"}}}, "options.1.value"},
		{"blank label", AskQuestionInput{TaskID: &id, Options: []*QuestionOptionInput{{Value: "a"}}}, "options.0.label"},
		{"USE_DEFAULT without default", AskQuestionInput{TaskID: &id, TimeoutAction: act(TimeoutUseDefault)}, "defaultAnswer"},
		{"USE_DEFAULT with default", AskQuestionInput{TaskID: &id, TimeoutAction: act(TimeoutUseDefault), DefaultAnswer: str("x")}, ""},
		{"default not an option", AskQuestionInput{TaskID: &id, Options: yesNo, DefaultAnswer: str("maybe")}, "defaultAnswer"},
		{"default an option", AskQuestionInput{TaskID: &id, Options: yesNo, DefaultAnswer: str("no")}, ""},
		{"FAIL_TASK on a list", AskQuestionInput{TaskListID: &id, TimeoutAction: act(TimeoutFailTask)}, "timeoutAction"},
		{"FAIL_TASK for an agent", AskQuestionInput{AgentID: &id, TimeoutAction: act(TimeoutFailTask)}, ""},
		{"expiry in the past", AskQuestionInput{TaskID: &id, ExpiresAt: &past}, "expiresAt"},
		{"expiry now", AskQuestionInput{TaskID: &id, ExpiresAt: &now}, "expiresAt"},
		{"expiry ahead", AskQuestionInput{TaskID: &id, ExpiresAt: &future}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.in.QuestionType == "" {
				c.in.QuestionType = QuestionDecision
			}
			if c.in.QuestionText == "" {
				c.in.QuestionText = "why?"
			}
			q, err := AskRules(c.in, now)
			if c.field == "" {
				require.NoError(t, err)
				require.Equal(t, QuestionPending, q.Status)
				require.Equal(t, QuestionMedium, q.Priority)
				return
			}
			e, ok := AsError(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, CodeBadUserInput, e.Code)
			require.Equal(t, c.field, e.Field)
		})
	}
}

func TestAnswerAndSkipRules(t *testing.T) {
	yes, no := "yes", "no"
	opts := QuestionOptions{{Value: "yes", Label: "Y"}, {Value: "no", Label: "N"}}
	for _, c := range []struct {
		name    string
		q       Question
		answer  string
		outcome AnswerOutcome
		code    Code
	}{
		{"pending", Question{Status: QuestionPending, Options: opts}, "yes", AnswerRecords, ""},
		{"not an option", Question{Status: QuestionPending, Options: opts}, "maybe", 0, CodeBadUserInput},
		{"free form", Question{Status: QuestionPending}, "anything", AnswerRecords, ""},
		{"same answer again", Question{Status: QuestionAnswered, Answer: &yes, Options: opts}, "yes", AnswerReplayed, ""},
		{"different answer", Question{Status: QuestionAnswered, Answer: &no, Options: opts}, "yes", 0, CodeConflict},
		{"the default's value after a timeout", Question{Status: QuestionAnswered, Answer: &yes, AnsweredByTimeout: true, Options: opts}, "yes", AnswerReplayed, ""},
		{"another value after a timeout", Question{Status: QuestionAnswered, Answer: &yes, AnsweredByTimeout: true, Options: opts}, "no", 0, CodeConflict},
		{"expired", Question{Status: QuestionExpired}, "yes", 0, CodeConflict},
		{"skipped", Question{Status: QuestionSkipped}, "yes", 0, CodeConflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := CheckAnswerText(&c.q, c.answer)
			if err == nil {
				var o AnswerOutcome
				o, err = AnswerRule(&c.q, a)
				if err == nil {
					require.Equal(t, c.outcome, o)
				}
			}
			if c.code == "" {
				require.NoError(t, err)
			} else {
				require.Equal(t, c.code, ErrorCode(err))
			}
		})
	}
	for st, want := range map[QuestionStatus]Code{QuestionPending: "", QuestionSkipped: "", QuestionAnswered: CodeConflict, QuestionExpired: CodeConflict} {
		replay, err := SkipRule(&Question{Status: st})
		if want == "" {
			require.NoError(t, err)
			require.Equal(t, st == QuestionSkipped, replay)
		} else {
			require.Equal(t, want, ErrorCode(err))
		}
	}
}

func TestQuestionExpire(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	before, after := now.Add(-time.Second), now.Add(time.Second)
	def, task := "no", "t"
	require.False(t, (&Question{Status: QuestionPending}).Expired(now), "no expiry")
	require.False(t, (&Question{Status: QuestionPending, ExpiresAt: &after}).Expired(now))
	require.True(t, (&Question{Status: QuestionPending, ExpiresAt: &now}).Expired(now))
	require.False(t, (&Question{Status: QuestionAnswered, ExpiresAt: &before}).Expired(now))

	q := &Question{Status: QuestionPending, TimeoutAction: TimeoutExpire, TaskID: &task}
	require.False(t, q.Expire(now))
	require.Equal(t, QuestionExpired, q.Status)

	q = &Question{Status: QuestionPending, TimeoutAction: TimeoutUseDefault, DefaultAnswer: &def}
	require.False(t, q.Expire(now))
	require.Equal(t, QuestionAnswered, q.Status)
	require.Equal(t, "no", *q.Answer)
	require.True(t, q.AnsweredByTimeout)
	require.Nil(t, q.AnsweredByID)

	q = &Question{Status: QuestionPending, TimeoutAction: TimeoutFailTask, TaskID: &task}
	require.True(t, q.Expire(now))
	require.Equal(t, QuestionExpired, q.Status)
	require.Nil(t, q.Answer, "a timeout is never recorded as an answer")
}

func TestButtonData(t *testing.T) {
	cb := NewCallbackData()
	require.LessOrEqual(t, len(ButtonData(cb, MaxQuestionOptions-1)), MaxCallbackData)
	got, i, ok := ParseButtonData(ButtonData(cb, 7))
	require.True(t, ok)
	require.Equal(t, cb, got)
	require.Equal(t, 7, i)
	for _, bad := range []string{"", cb, cb + ":", cb + ":-1", cb + ":99", ":1", cb + ":x"} {
		_, _, ok := ParseButtonData(bad)
		require.False(t, ok, bad)
	}
	require.NotEqual(t, cb, NewCallbackData())
}

func TestQuestionEventsDecode(t *testing.T) {
	now := time.Now().UTC()
	ans, reason, run, task, agent := "yes", "why", "r", "t", "a"
	q := &Question{ID: "q", ProjectID: "p", RunID: &run, TaskID: &task, AgentID: &agent, Answer: &ans, AnsweredByTimeout: true,
		TimeoutAction: TimeoutUseDefault}
	for _, e := range []*Event{NewQuestionAsked(q, now), NewQuestionAnswered(q, now), NewQuestionExpired(q, now), NewQuestionSkipped(q, &reason, now)} {
		require.Equal(t, &run, e.RunID)
		got, err := DecodeEvent(e)
		require.NoError(t, err)
		switch g := got.(type) {
		case *QuestionAskedEvent:
			require.Equal(t, "q", g.QuestionID)
		case *QuestionAnsweredEvent:
			require.Equal(t, "yes", g.Answer)
			require.True(t, g.ByTimeout)
		case *QuestionExpiredEvent:
			require.Equal(t, TimeoutUseDefault, g.TimeoutAction)
		case *QuestionSkippedEvent:
			require.Equal(t, "why", *g.Reason)
		default:
			t.Fatalf("unexpected %T", got)
		}
	}
}
