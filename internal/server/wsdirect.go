package server

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// A member of a shared execution writes its events to its connection itself.
// gqlgen's transport would marshal each response once per subscriber and
// hand it through its message exchanger; the execution marshals the response
// once (sharedResponse.payload) and each member appends it, framed with its
// operation's id, to its connection's pending writes. What gqlgen keeps: the
// operation's goroutine (the member's answers come from it, in order), its
// complete or error (written after the member's last event) and every
// per-operation rule of the transport.
//
// The member needs its operation's id, which gqlgen does not hand the
// executor. gqlgen's reader reads a subscribe message, creates the
// operation's context (CreateOperationContext, below) and only then reads
// the next message; the connection notes the id of the subscribe it
// admitted (wsConn.check) and CreateOperationContext binds it to the
// operation, which DispatchOperation takes back.

// CreateOperationContext binds the operation to the id of the subscribe
// message just read on the websocket.
func (e muxExecutor) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	rc, errs := e.GraphExecutor.CreateOperationContext(ctx, params)
	if ref := socketRefFrom(ctx); errs == nil && rc != nil && ref != nil && ref.conn != nil {
		ref.conn.bindOperation(rc)
	}
	return rc, errs
}

// operationConn is the connection of ctx and the id of its operation rc; nil
// when unknown (the member then answers through gqlgen). It unbinds rc.
func operationConn(ctx context.Context, rc *graphql.OperationContext) (*wsConn, string) {
	ref := socketRefFrom(ctx)
	if ref == nil || ref.conn == nil {
		return nil, ""
	}
	id, ok := ref.conn.takeOperation(rc)
	if !ok {
		return nil, ""
	}
	return ref.conn, id
}

func (c *wsConn) bindOperation(rc *graphql.OperationContext) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastSubscribe == "" {
		return
	}
	if c.opIDs == nil {
		c.opIDs = map[*graphql.OperationContext]string{}
	}
	c.opIDs[rc] = c.lastSubscribe
	c.lastSubscribe = ""
}

func (c *wsConn) takeOperation(rc *graphql.OperationContext) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.opIDs[rc]
	if ok {
		delete(c.opIDs, rc)
		if len(c.opIDs) == 0 {
			c.opIDs = nil
		}
	}
	return id, ok
}

// writeNext writes payload (a marshalled graphql.Response) as the next event
// of operation id, as gqlgen's transport would.
func (c *wsConn) writeNext(id string, payload []byte) error {
	buf := messageBuffers.Get().(*[]byte)
	defer messageBuffers.Put(buf)
	*buf = wsMessage{typ: c.nextType(), id: id, payload: payload}.appendJSON((*buf)[:0])
	return c.write(*buf)
}

// tryWriteNext is writeNext without waiting: false when the connection's
// pending writes are at their bound or it is broken or closing.
func (c *wsConn) tryWriteNext(id string, payload []byte) bool {
	buf := messageBuffers.Get().(*[]byte)
	defer messageBuffers.Put(buf)
	*buf = wsMessage{typ: c.nextType(), id: id, payload: payload}.appendJSON((*buf)[:0])
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if len(c.pending) > maxPendingWrites || c.writeErr != nil || c.writeClosed {
		return false
	}
	c.pending = appendTextFrame(c.pending, *buf)
	if !c.flushing {
		c.flushing = true
		go c.flush()
	}
	return true
}

// nextType is the type of an event's message in the connection's protocol.
func (c *wsConn) nextType() string {
	if c.ws.Subprotocol() == subprotocolTransportWS {
		return "next"
	}
	return "data" // graphql-ws
}
