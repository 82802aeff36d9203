package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// fakeSubServer speaks graphql-transport-ws: it acks the init, reads the
// subscriptions, then once start is closed sends each one events next
// messages and, for the subscription with id fail, an error instead.
func fakeSubServer(t *testing.T, events int, fail string, start <-chan struct{}) *httptest.Server {
	up := websocket.Upgrader{Subprotocols: []string{"graphql-transport-ws"}}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		var init struct {
			Type    string
			Payload map[string]any
		}
		if err := ws.ReadJSON(&init); err != nil || init.Type != "connection_init" || init.Payload["Authorization"] != "Bearer tok" {
			t.Errorf("init %+v, %v", init, err)
			return
		}
		_ = ws.WriteJSON(map[string]string{"type": "connection_ack"})
		var ids []string
		for range 3 {
			var sub struct {
				ID, Type string
				Payload  graphQLRequest
			}
			if err := ws.ReadJSON(&sub); err != nil || sub.Type != "subscribe" || !strings.Contains(sub.Payload.Query, "projectEvents") {
				t.Errorf("subscribe %+v, %v", sub, err)
				return
			}
			ids = append(ids, sub.ID)
		}
		_ = ws.WriteJSON(map[string]string{"type": "ping"})
		<-start
		for e := range events {
			at := time.Now().Add(-5 * time.Millisecond).UTC().Format(time.RFC3339Nano)
			for _, id := range ids {
				msg := fmt.Sprintf(`{"payload":{"data":{"projectEvents":{"cursor":"c%d","occurredAt":%q,"task":{"id":"t"}}}},"id":%q,"type":"next"}`, e, at, id)
				if id == fail {
					if e > 0 {
						continue // the server ended it
					}
					msg = fmt.Sprintf(`{"id":%q,"type":"error","payload":[{"message":"too slow"}]}`, id)
				}
				if err := ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
					return
				}
			}
		}
		var pong map[string]string
		_ = ws.ReadJSON(&pong)
		if pong["type"] != "pong" {
			t.Errorf("no pong: %v", pong)
		}
		// Stay open until the client closes.
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}))
}

func TestSubPoolCountsDeliveries(t *testing.T) {
	start := make(chan struct{})
	srv := fakeSubServer(t, 4, "2", start)
	defer srv.Close()
	started := false
	defer func() {
		if !started {
			close(start) // let the handlers end before the server closes
		}
	}()
	p, err := openSubPool(context.Background(), subscribeSpec{url: wsURL(srv.URL), initPayload: map[string]any{"Authorization": "Bearer tok"},
		query: taskgraphWatch, variables: map[string]any{"projectId": "p"}, connections: 2, perConn: 3})
	if err != nil {
		t.Fatal(err)
	}
	p.recording.Store(true)
	close(start)
	started = true
	deadline := time.Now().Add(10 * time.Second)
	for {
		total, without := p.total()
		if total == 2*2*4 && p.errs.Load() == 2 {
			if without != 2 {
				t.Errorf("%d subscriptions without an event, want 2 (the failed ones)", without)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d, errors %d; want 16 and 2 (%s)", total, p.errs.Load(), p.problems())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := p.counts(); len(got) != 6 || got[0] != 4 || got[1] != 0 || got[5] != 4 {
		t.Errorf("counts %v", got)
	}
	lat := p.takeLatencies()
	if len(lat) != 16 || lat[0] < 5*time.Millisecond {
		t.Errorf("latencies %v", lat)
	}
	if len(p.takeLatencies()) != 0 {
		t.Error("latencies kept after being taken")
	}
	if pr := p.problems(); !strings.Contains(pr, "2 subscriptions ended with an error, the first: ") || !strings.Contains(pr, "too slow") || strings.Contains(pr, "unexpected") {
		t.Errorf("problems %q", pr)
	}
	p.close()
	if b, _ := json.Marshal(p.counts()); string(b) != "[4,0,4,4,0,4]" {
		t.Errorf("counts after close %s", b)
	}
}

func TestOpenSubPoolRefusesAServerWithoutAck(t *testing.T) {
	up := websocket.Upgrader{Subprotocols: []string{"graphql-transport-ws"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		_, _, _ = ws.ReadMessage()
		_ = ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4403, "Forbidden"))
	}))
	defer srv.Close()
	_, err := openSubPool(context.Background(), subscribeSpec{url: wsURL(srv.URL), connections: 1, perConn: 1})
	if err == nil || !strings.Contains(err.Error(), "no connection_ack") {
		t.Errorf("got %v", err)
	}
}
