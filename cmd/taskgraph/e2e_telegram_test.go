package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// fakeBotAPI is a local Telegram Bot API: it records the calls it gets and
// hands out the updates a test injects through getUpdates.
type fakeBotAPI struct {
	*httptest.Server
	token string

	mu          sync.Mutex
	calls       []botCall
	updates     []map[string]any
	nextUpdate  int
	nextMessage int
	inFlight    int // getUpdates calls being answered now
	maxInFlight int
	badToken    int
}

// botCall is one recorded call: its method and form fields.
type botCall struct {
	Method string
	Fields map[string]string
}

func newFakeBotAPI(t *testing.T, token string) *fakeBotAPI {
	f := &fakeBotAPI{token: token, nextUpdate: 1, nextMessage: 100}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeBotAPI) serve(w http.ResponseWriter, r *http.Request) {
	prefix := "/bot" + f.token + "/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		f.mu.Lock()
		f.badToken++
		f.mu.Unlock()
		http.Error(w, `{"ok":false,"error_code":401,"description":"Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	method := strings.TrimPrefix(r.URL.Path, prefix)
	_ = r.ParseMultipartForm(1 << 20)
	fields := map[string]string{}
	for k, v := range r.Form {
		fields[k] = v[0]
	}
	reply := func(result any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
	}
	if method == "getUpdates" {
		f.mu.Lock()
		f.inFlight++
		f.maxInFlight = max(f.maxInFlight, f.inFlight)
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.inFlight--
			f.mu.Unlock()
		}()
		offset, _ := strconv.Atoi(fields["offset"])
		// A short long poll: up to 50ms for an update.
		for range 10 {
			f.mu.Lock()
			var out []map[string]any
			for _, u := range f.updates {
				if u["update_id"].(int) >= offset {
					out = append(out, u)
				}
			}
			f.mu.Unlock()
			if len(out) > 0 {
				reply(out)
				return
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		reply([]any{})
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, botCall{Method: method, Fields: fields})
	id := f.nextMessage
	f.nextMessage++
	f.mu.Unlock()
	switch method {
	case "sendMessage", "editMessageText":
		chat, _ := strconv.ParseInt(fields["chat_id"], 10, 64)
		if mid, err := strconv.Atoi(fields["message_id"]); err == nil {
			id = mid
		}
		reply(map[string]any{"message_id": id, "date": time.Now().Unix(), "text": fields["text"],
			"chat": map[string]any{"id": chat, "type": "private"}})
	default:
		reply(true)
	}
}

// press injects a button press by Telegram user from.
func (f *fakeBotAPI) press(queryID string, from int64, data string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := map[string]any{"update_id": f.nextUpdate, "callback_query": map[string]any{
		"id": queryID, "from": map[string]any{"id": from, "is_bot": false, "first_name": "someone"},
		"chat_instance": "ci", "data": data,
		"message": map[string]any{"message_id": 1, "date": 1, "chat": map[string]any{"id": from, "type": "private"}}}}
	f.nextUpdate++
	f.updates = append(f.updates, u)
	return u
}

// called returns the recorded calls of method.
func (f *fakeBotAPI) called(method string) []botCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []botCall
	for _, c := range f.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// ackOf returns the answerCallbackQuery of a press, if made.
func (f *fakeBotAPI) ackOf(queryID string) *botCall {
	for _, c := range f.called("answerCallbackQuery") {
		if c.Fields["callback_query_id"] == queryID {
			return &c
		}
	}
	return nil
}

// TestTelegram: with a bot token, a question is sent to its project owner's
// chat with one button per option; a press from a chat of no user is refused
// (acknowledged, question unchanged); a press from the owner's chat answers
// it as answerQuestion does; the message is edited on answer and on skip; on
// PostgreSQL two replicas poll, one at a time. Then the webhook: refused
// without the secret-token header, answering with it. The bot token appears
// in no log line.
func TestTelegram(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		const botToken = "123456:telegram-secret-token-ABC"
		fake := newFakeBotAPI(t, botToken)
		admin := "admin-" + t.Name()
		replicas := 1
		if strings.HasPrefix(url, "postgres") {
			replicas = 2
		}
		var servers []*childServer
		for range replicas {
			servers = append(servers, startChildServer(t, "127.0.0.1:0", url, admin,
				"--telegram-bot-token", botToken, "--telegram-api-url", fake.URL, "--question-sweep-interval", "50ms"))
		}
		s := &testServer{URL: "http://" + servers[0].addr, AdminToken: admin}

		// A member whose Telegram chat is 7001 owns the project.
		var u struct {
			CreateUser struct{ User struct{ ID string } }
		}
		s.mustDo(t, admin, `mutation { createUser(input: {name: "tg", email: "tg@example.com", slug: "tg", telegramChatId: "7001"}) { user { id } } }`, nil, &u)
		var tok struct{ CreateAPIToken struct{ Token string } }
		s.mustDo(t, admin, `mutation($u: ID!) { createApiToken(input: {userId: $u, name: "m", role: MEMBER}) { token } }`,
			M{"u": u.CreateUser.User.ID}, &tok)
		member := tok.CreateAPIToken.Token
		project := s.createProject(t, member, "telegram")
		task := s.createTask(t, member, project, "deploy", nil)

		ask := func(text string) jv {
			return s.query(t, member, askMutation, M{"in": M{"taskId": task, "questionType": "APPROVAL", "questionText": text,
				"options": []M{{"value": "yes", "label": "Ship it"}, {"value": "no", "label": "Hold"}}}}).at("askQuestion.question")
		}
		q := ask("Deploy now?")
		cb := q.S("callbackData")
		var sent botCall
		eventually(t, "the question is sent", func() bool {
			for _, c := range fake.called("sendMessage") {
				if strings.Contains(c.Fields["text"], "Deploy now?") {
					sent = c
					return true
				}
			}
			return false
		})
		require.Equal(t, "7001", sent.Fields["chat_id"])
		var markup struct {
			InlineKeyboard [][]struct {
				Text         string `json:"text"`
				CallbackData string `json:"callback_data"`
			} `json:"inline_keyboard"`
		}
		require.NoError(t, json.Unmarshal([]byte(sent.Fields["reply_markup"]), &markup))
		var buttons []string
		for _, row := range markup.InlineKeyboard {
			for _, b := range row {
				buttons = append(buttons, b.Text+"="+b.CallbackData)
			}
		}
		require.Equal(t, []string{"Ship it=" + cb + ":0", "Hold=" + cb + ":1"}, buttons)
		eventually(t, "the message id is kept", func() bool {
			return !s.query(t, member, `query($id: ID!) { question(id: $id) { telegramMessageId } }`, M{"id": q.S("id")}).Null("question.telegramMessageId")
		})
		messageID := s.query(t, member, `query($id: ID!) { question(id: $id) { telegramMessageId } }`, M{"id": q.S("id")}).S("question.telegramMessageId")

		// A press from a chat of no user: acknowledged, refused.
		fake.press("stranger", 9999, cb+":0")
		eventually(t, "the stranger's press is acknowledged", func() bool { return fake.ackOf("stranger") != nil })
		require.Contains(t, fake.ackOf("stranger").Fields["text"], "not allowed")
		require.Equal(t, "PENDING", s.query(t, member, questionQuery, M{"id": q.S("id")}).S("question.status"))

		// The owner presses "Hold".
		fake.press("owner", 7001, cb+":1")
		eventually(t, "the owner's press is acknowledged", func() bool { return fake.ackOf("owner") != nil })
		got := s.query(t, member, questionQuery, M{"id": q.S("id")}).at("question")
		require.Equal(t, "ANSWERED", got.S("status"))
		require.Equal(t, "no", got.S("answer"))
		require.Equal(t, u.CreateUser.User.ID, got.S("answeredBy.id"))
		require.Contains(t, fake.ackOf("owner").Fields["text"], "Hold")
		edited := func(id, want string) func() bool {
			return func() bool {
				for _, c := range fake.called("editMessageText") {
					if c.Fields["message_id"] == id && strings.Contains(c.Fields["text"], want) {
						return true
					}
				}
				return false
			}
		}
		eventually(t, "the message shows the answer", edited(messageID, "Answered: Hold"))
		// A second press: too late, and still one answer.
		fake.press("again", 7001, cb+":0")
		eventually(t, "the late press is acknowledged", func() bool { return fake.ackOf("again") != nil })
		require.Equal(t, "no", s.query(t, member, questionQuery, M{"id": q.S("id")}).S("question.answer"))

		// Skipped through the API: the message says so.
		q2 := ask("Roll back?")
		var q2Message string
		eventually(t, "the second question is sent", func() bool {
			d := s.query(t, member, `query($id: ID!) { question(id: $id) { telegramMessageId } }`, M{"id": q2.S("id")})
			if d.Null("question.telegramMessageId") {
				return false
			}
			q2Message = d.S("question.telegramMessageId")
			return true
		})
		s.query(t, member, skipMutation, M{"in": M{"id": q2.S("id"), "reason": "not needed"}})
		eventually(t, "the message shows the skip", edited(q2Message, "Skipped: not needed"))
		// Expired by the sweep: the message says so.
		q4 := s.query(t, member, askMutation, M{"in": M{"taskId": task, "questionType": "DECISION", "questionText": "Expiring?",
			"expiresAt": time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)}}).at("askQuestion.question")
		var q4Message string
		eventually(t, "the expiring question is sent", func() bool {
			d := s.query(t, member, `query($id: ID!) { question(id: $id) { telegramMessageId } }`, M{"id": q4.S("id")})
			if d.Null("question.telegramMessageId") {
				return false
			}
			q4Message = d.S("question.telegramMessageId")
			return true
		})
		eventually(t, "the message shows the expiry", edited(q4Message, "Expired unanswered"))
		n := 0
		for _, ev := range (&execList{planList: &planList{s: s, token: member, project: project}}).questionEventsOf(t) {
			if ev.S("type") == "QUESTION_ANSWERED" {
				n++
			}
		}
		require.Equal(t, 1, n, "one answer, however many replicas poll")

		// The webhook: its own replica, which does not poll.
		const secret = "hook-secret"
		hook := startChildServer(t, "127.0.0.1:0", url, admin, "--telegram-bot-token", botToken,
			"--telegram-api-url", fake.URL, "--telegram-webhook-secret", secret)
		q3 := ask("Webhook?")
		update, _ := json.Marshal(map[string]any{"update_id": 1_000_000, "callback_query": map[string]any{
			"id": "hooked", "from": map[string]any{"id": 7001, "is_bot": false, "first_name": "tg"}, "chat_instance": "ci",
			"data": q3.S("callbackData") + ":0"}})
		post := func(header string) int {
			req, err := http.NewRequest(http.MethodPost, "http://"+hook.addr+"/telegram/webhook", strings.NewReader(string(update)))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if header != "" {
				req.Header.Set("X-Telegram-Bot-Api-Secret-Token", header)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		require.Equal(t, http.StatusForbidden, post(""))
		require.Equal(t, http.StatusForbidden, post("wrong"))
		require.Equal(t, "PENDING", s.query(t, member, questionQuery, M{"id": q3.S("id")}).S("question.status"))
		require.Equal(t, http.StatusOK, post(secret))
		require.Equal(t, "yes", s.query(t, member, questionQuery, M{"id": q3.S("id")}).S("question.answer"))
		require.NotNil(t, fake.ackOf("hooked"))

		fake.mu.Lock()
		require.LessOrEqual(t, fake.maxInFlight, 1, "one replica polls at a time")
		require.Zero(t, fake.badToken)
		fake.mu.Unlock()
		for _, srv := range append(servers, hook) {
			srv.stop(t)
			for _, line := range srv.stderr.lines() {
				require.NotContains(t, line, "telegram-secret-token", "the bot token in a log line")
			}
		}
	})
}
