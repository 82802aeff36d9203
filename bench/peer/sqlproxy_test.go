package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"
)

// untyped is a startup-phase message: length, code, body.
func untyped(code uint32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
	b = binary.BigEndian.AppendUint32(b, code)
	return append(b, body...)
}

// typed is a message after startup: type byte, length, body.
func typed(t byte, body string) []byte {
	b := []byte{t}
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(body)))
	return append(b, body...)
}

func TestCountMessages(t *testing.T) {
	var in []byte
	in = append(in, untyped(sslRequestCode, nil)...)
	in = append(in, untyped(196608, []byte("user\x00postgres\x00database\x00peer\x00\x00"))...) // protocol 3.0
	in = append(in, typed('Q', "SELECT 1\x00")...)
	for _, m := range []struct {
		t    byte
		body string
	}{{'P', "\x00SELECT $1\x00\x00\x00"}, {'B', "\x00\x00\x00\x00\x00\x01\x00\x00\x00\x011\x00\x00"}, {'D', "P\x00"}, {'E', "\x00\x00\x00\x00\x00"}, {'S', ""}} {
		in = append(in, typed(m.t, m.body)...)
	}
	in = append(in, typed('E', "\x00\x00\x00\x00\x00")...)
	in = append(in, typed('X', "")...)

	var out bytes.Buffer
	var n atomic.Int64
	if err := countMessages(bytes.NewReader(in), &out, &n); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 3 {
		t.Errorf("counted %d statements, want 3 (one Query, two Executes)", got)
	}
	if !bytes.Equal(out.Bytes(), in) {
		t.Errorf("forwarded %d bytes that differ from the %d sent", out.Len(), len(in))
	}
}

func TestCountMessagesRefusesAnAbsurdLength(t *testing.T) {
	in := append(untyped(196608, []byte("user\x00p\x00\x00")), 'Q', 0xff, 0xff, 0xff, 0xff)
	var n atomic.Int64
	if err := countMessages(bytes.NewReader(in), &bytes.Buffer{}, &n); err == nil {
		t.Error("a 4 GiB message was forwarded")
	}
}

// The proxy forwards both ways, counts, and knows the port its connection
// to the database comes from (a backend's title shows it).
func TestSQLProxyForwardsAndOwnsItsPorts(t *testing.T) {
	upstream, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer upstream.Close()
	startup := untyped(196608, []byte("user\x00u\x00\x00"))
	query := typed('Q', "SELECT 1\x00")
	type seen struct {
		port int
		got  []byte
	}
	seenc := make(chan seen, 1)
	checked := make(chan struct{}) // the connection stays open until the checks are done
	defer close(checked)
	go func() {
		c, err := upstream.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		defer func() { <-checked }()
		got := make([]byte, len(startup)+len(query))
		_, _ = io.ReadFull(c, got)
		_, _ = c.Write([]byte("Z")) // a reply, forwarded unread
		seenc <- seen{c.RemoteAddr().(*net.TCPAddr).Port, got}
	}()

	p, err := startSQLProxy(upstream.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(append(startup, query...)); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, 1)
	if _, err := io.ReadFull(c, reply); err != nil || reply[0] != 'Z' {
		t.Fatalf("reply %q, %v", reply, err)
	}
	s := <-seenc
	if !bytes.Equal(s.got, append(startup, query...)) {
		t.Errorf("the database got %q", s.got)
	}
	if n := p.Statements(); n != 1 {
		t.Errorf("%d statements counted, want 1", n)
	}
	if !p.OwnsClientPort(s.port) {
		t.Errorf("the proxy does not own port %d, which its connection came from", s.port)
	}
	if p.OwnsClientPort(s.port + 1) {
		t.Error("the proxy owns a port it never used")
	}
}
