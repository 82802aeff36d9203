// Package telegram puts questions to people in Telegram chats through the
// Bot API (github.com/go-telegram/bot): a question whose task list, or else
// whose project owner, has a telegramChatId is sent there with one button per
// option; a press from the chat of a user allowed to answer answers the
// question as answerQuestion does and is acknowledged; the message is edited
// to show the outcome (answered, expired, skipped).
//
// Updates come by long polling, held by one replica at a time (a PostgreSQL
// advisory lock), or through the webhook handler when a secret is set. The
// bot token is never logged: errors are scrubbed of it.
package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/questions"
	"github.com/taskgraph/taskgraph/internal/store"
)

// DefaultAPIURL is the public Bot API.
const DefaultAPIURL = "https://api.telegram.org"

// Options configure a Bot.
type Options struct {
	Token  string // the bot's token (required)
	APIURL string // default DefaultAPIURL
	// WebhookSecret, when set, makes the bot take updates from the webhook
	// handler (POST /telegram/webhook) instead of long polling.
	WebhookSecret string
	Logger        *slog.Logger
	// PollTimeout bounds one long poll (default 30s); RetryEvery is how often
	// a replica that is not polling tries to take over (default 5s).
	PollTimeout, RetryEvery time.Duration
}

// Bot is the Telegram integration of the questions.
type Bot struct {
	db     *store.DB
	qs     *questions.Service
	b      *bot.Bot
	token  string
	secret string
	log    *slog.Logger
	retry  time.Duration
	queue  chan *domain.Question
}

// New returns the Bot; it makes no call to the Bot API until Run.
func New(db *store.DB, qs *questions.Service, opts Options) (*Bot, error) {
	if opts.APIURL == "" {
		opts.APIURL = DefaultAPIURL
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = 30 * time.Second
	}
	if opts.RetryEvery <= 0 {
		opts.RetryEvery = 5 * time.Second
	}
	t := &Bot{db: db, qs: qs, token: opts.Token, secret: opts.WebhookSecret, log: opts.Logger, retry: opts.RetryEvery,
		queue: make(chan *domain.Question, 1024)}
	b, err := bot.New(opts.Token, bot.WithServerURL(strings.TrimRight(opts.APIURL, "/")), bot.WithSkipGetMe(),
		bot.WithHTTPClient(opts.PollTimeout+5*time.Second, &http.Client{Timeout: opts.PollTimeout + 10*time.Second}),
		bot.WithDefaultHandler(func(ctx context.Context, _ *bot.Bot, u *models.Update) { t.handle(ctx, u) }),
		bot.WithErrorsHandler(func(err error) { t.log.Error("telegram", "err", t.scrub(err)) }),
		bot.WithDebugHandler(func(string, ...any) {}),
		bot.WithAllowedUpdates(bot.AllowedUpdates{"callback_query"}),
		bot.WithNotAsyncHandlers())
	if err != nil {
		return nil, errors.New("telegram: bad bot token")
	}
	t.b = b
	qs.SetNotify(t.notify)
	return t, nil
}

// scrub hides the bot token in an error's text.
func (t *Bot) scrub(err error) string {
	if t.token == "" {
		return err.Error()
	}
	return strings.ReplaceAll(err.Error(), t.token, "***")
}

// notify queues a question asked or settled for the sender (after its
// commit; never blocks the committer).
func (t *Bot) notify(q *domain.Question) {
	select {
	case t.queue <- q:
	default:
		t.log.Warn("telegram: notification queue full, message not sent or updated", "question", q.GlobalID())
	}
}

// Run sends and edits messages, and reads updates by long polling unless a
// webhook secret is set, until ctx ends.
func (t *Bot) Run(ctx context.Context) {
	if t.secret == "" {
		go t.poll(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case q := <-t.queue:
			if err := t.deliver(ctx, q); err != nil && ctx.Err() == nil {
				t.log.Error("telegram: message not sent or updated", "question", q.GlobalID(), "err", t.scrub(err))
			}
		}
	}
}

// deliver sends a new question, or edits the message of a settled one.
func (t *Bot) deliver(ctx context.Context, q *domain.Question) error {
	if q.Status != domain.QuestionPending {
		return t.showOutcome(ctx, q.ID)
	}
	if q.TelegramMessageID != nil {
		return nil
	}
	chat, err := t.db.Questions.ChatOfQuestion(ctx, q)
	if errors.Is(err, store.ErrNotFound) {
		return nil // nobody to tell
	} else if err != nil {
		return err
	}
	var kb [][]models.InlineKeyboardButton
	for i, o := range q.Options {
		kb = append(kb, []models.InlineKeyboardButton{{Text: o.Label, CallbackData: domain.ButtonData(q.CallbackData, i)}})
	}
	params := &bot.SendMessageParams{ChatID: chat, Text: questionText(q)}
	if len(kb) > 0 {
		params.ReplyMarkup = &models.InlineKeyboardMarkup{InlineKeyboard: kb}
	}
	msg, err := t.b.SendMessage(ctx, params)
	if err != nil {
		return fmt.Errorf("sendMessage: %w", err)
	}
	if err := t.db.Questions.SetTelegramMessage(ctx, q.ID, chat, strconv.Itoa(msg.ID)); err != nil {
		return err
	}
	// Settled while the message was on its way: show it now.
	return t.showOutcome(ctx, q.ID)
}

// showOutcome edits a settled question's message to show its outcome.
func (t *Bot) showOutcome(ctx context.Context, id string) error {
	qs, err := t.db.Questions.QuestionsByIDs(ctx, []string{id})
	if err != nil || len(qs) == 0 {
		return err
	}
	q := qs[0]
	if q.Status == domain.QuestionPending || q.TelegramMessageID == nil || q.TelegramChatID == nil {
		return nil
	}
	msgID, err := strconv.Atoi(*q.TelegramMessageID)
	if err != nil {
		return nil
	}
	_, err = t.b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: *q.TelegramChatID, MessageID: msgID,
		Text: questionText(q) + "\n\n" + outcome(q)})
	if err != nil {
		return fmt.Errorf("editMessageText: %w", err)
	}
	return nil
}

func questionText(q *domain.Question) string {
	return fmt.Sprintf("Question (%s, %s):\n%s", strings.ToLower(string(q.QuestionType)), strings.ToLower(string(q.Priority)), q.QuestionText)
}

// outcome describes how a question was settled.
func outcome(q *domain.Question) string {
	switch q.Status {
	case domain.QuestionAnswered:
		answer := label(q, *q.Answer)
		if q.AnsweredByTimeout {
			return "Answered by timeout with the default: " + answer
		}
		return "Answered: " + answer
	case domain.QuestionExpired:
		if q.TimeoutAction == domain.TimeoutFailTask {
			return "Expired unanswered: the task failed."
		}
		return "Expired unanswered."
	case domain.QuestionSkipped:
		if q.SkipReason != nil {
			return "Skipped: " + *q.SkipReason
		}
		return "Skipped."
	}
	return ""
}

func label(q *domain.Question, value string) string {
	for _, o := range q.Options {
		if o.Value == value {
			return o.Label
		}
	}
	return value
}

// poll reads updates by long polling while this replica holds the poller's
// lock (PostgreSQL; SQLite has one server), retrying to take it over.
func (t *Bot) poll(ctx context.Context) {
	for ctx.Err() == nil {
		release, err := t.db.TryLeaderLock(ctx, "taskgraph-telegram-poller")
		if err != nil && ctx.Err() == nil {
			t.log.Error("telegram: poller lock", "err", err)
		}
		if release != nil {
			t.log.Info("telegram: polling for updates on this replica")
			pollCtx, cancel := context.WithCancel(ctx)
			go func() {
				// Poll only while the lock holds: its connection must live.
				<-release.Lost()
				cancel()
			}()
			t.b.Start(pollCtx)
			cancel()
			release.Release()
		}
		select {
		case <-ctx.Done():
		case <-time.After(t.retry):
		}
	}
}

// WebhookHandler takes updates posted by the Bot API, checking the
// secret-token header.
func (t *Bot) WebhookHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t.secret == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Telegram-Bot-Api-Secret-Token")), []byte(t.secret)) != 1 {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		var u models.Update
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&u); err != nil {
			http.Error(w, "bad update", http.StatusBadRequest)
			return
		}
		t.handle(r.Context(), &u)
		w.WriteHeader(http.StatusOK)
	})
}

// handle answers a question from a button press, and acknowledges it.
func (t *Bot) handle(ctx context.Context, u *models.Update) {
	cq := u.CallbackQuery
	if cq == nil {
		return
	}
	ack := func(text string) {
		if _, err := t.b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: cq.ID, Text: text}); err != nil {
			t.log.Error("telegram: answerCallbackQuery", "err", t.scrub(err))
		}
	}
	data, index, ok := domain.ParseButtonData(cq.Data)
	if !ok {
		ack("Unknown button.")
		return
	}
	chat := strconv.FormatInt(cq.From.ID, 10)
	p, err := t.principal(ctx, chat)
	if err != nil {
		t.log.Error("telegram: who pressed", "err", err)
		ack("Something went wrong.")
		return
	}
	if p == nil {
		t.log.Warn("telegram: press from a chat of no user refused", "chat", chat)
		ack("You are not allowed to answer this question.")
		return
	}
	q, err := t.db.Questions.QuestionByCallbackData(ctx, data)
	if err != nil || index >= len(q.Options) {
		ack("Unknown question.")
		return
	}
	got, err := t.qs.AnswerAs(ctx, p, domain.AnswerQuestionInput{CallbackData: &data, Answer: q.Options[index].Value})
	if err == nil {
		ack("Answered: " + label(got, *got.Answer))
		return
	}
	switch domain.ErrorCode(err) {
	case domain.CodeNotFound, domain.CodeForbidden:
		ack("You are not allowed to answer this question.")
		return
	case domain.CodeConflict:
		ack("Too late: the question is already settled.")
		return
	}
	t.log.Error("telegram: answer from a button", "err", err)
	ack("Something went wrong.")
}

// principal is the caller a press from chat answers as: the user whose
// telegramChatId it is (ADMIN when the user holds an admin token), or nil.
func (t *Bot) principal(ctx context.Context, chat string) (*auth.Principal, error) {
	u, admin, err := t.db.Questions.TelegramUser(ctx, chat, domain.RoleAdmin)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	role := domain.RoleMember
	if admin {
		role = domain.RoleAdmin
	}
	return &auth.Principal{UserID: u.ID, Role: role}, nil
}
