package main

import (
	"testing"
	"time"
)

func TestScanMessage(t *testing.T) {
	for _, c := range []struct {
		msg, typ, id, at string
		ok               bool
	}{
		// Taskgraph's order: the payload, with a task id, before the message's id.
		{`{"payload":{"data":{"projectEvents":{"cursor":"c:1","type":"TASK_UPDATED","occurredAt":"2026-11-28T12:00:00.5Z","task":{"id":"VGFzazox","title":"a \"quoted\" title"}}}},"id":"17","type":"next"}`,
			"next", "17", "2026-11-28T12:00:00.5Z", true},
		{`{"id":"3","type":"next","payload":{"data":{"taskEvents":{"type":"TASK_UPDATED","occurredAt":"2026-11-28T12:00:00.123456+00:00","task":{"id":"5f0e"}}}}}`,
			"next", "3", "2026-11-28T12:00:00.123456+00:00", true},
		{`{"id":"9","type":"error","payload":[{"message":"too slow","extensions":{"code":"LIMIT_EXCEEDED"}}]}`, "error", "9", "", true},
		{`{ "type" : "ping" }`, "ping", "", "", true},
		{`{"type":"next","id":"1","payload":{"data":{"x":[1,{"occurredAt":"t"}],"n":3}}}`, "next", "1", "t", true},
		{`{"type":"next","id":"1"`, "next", "1", "", false}, // cut short
		{`{"id":"1","payload":"x`, "", "1", "", false},
		{`[1,2]`, "", "", "", false},
	} {
		m, ok := scanMessage([]byte(c.msg))
		if ok != c.ok || string(m.typ) != c.typ || string(m.id) != c.id || string(m.occurredAt) != c.at {
			t.Errorf("%s:\n got (%q, %q, %q, %v), want (%q, %q, %q, %v)", c.msg, m.typ, m.id, m.occurredAt, ok, c.typ, c.id, c.at, c.ok)
		}
	}
}

func TestWSURL(t *testing.T) {
	if got := wsURL("http://127.0.0.1:8080/graphql"); got != "ws://127.0.0.1:8080/graphql" {
		t.Error(got)
	}
	if got := wsURL("https://h/graphql"); got != "wss://h/graphql" {
		t.Error(got)
	}
}

// The load generator's own work per event, without the socket: scanning
// the message and parsing its time.
func BenchmarkScanMessage(b *testing.B) {
	msg := []byte(`{"payload":{"data":{"projectEvents":{"cursor":"MTIzNDU2Nzg5MA==","type":"TASK_UPDATED","occurredAt":"2026-11-28T12:00:00.123456Z","task":{"id":"VGFzazowMTkzYjQ1ZC1hYmNkLTc4OTAtYWJjZC0xMjM0NTY3ODkwYWI=","displayId":"TU-PEERSUBS-TSK-001","title":"subscribed task, touch 12","status":"PENDING"}}}},"id":"17","type":"next"}`)
	for b.Loop() {
		m, ok := scanMessage(msg)
		if !ok {
			b.Fatal("unread")
		}
		if _, err := time.Parse(time.RFC3339Nano, string(m.occurredAt)); err != nil {
			b.Fatal(err)
		}
	}
}
