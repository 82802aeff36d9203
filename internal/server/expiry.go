package server

import (
	"time"

	"github.com/taskgraph/taskgraph/internal/auth"
)

// closeAtExpiry closes c with 4403 when p's credential expires (an OpenID
// Connect JWT's exp); API tokens do not expire and are watched for
// revocation instead (revocation.go).
func closeAtExpiry(c *wsConn, p *auth.Principal) {
	if c == nil || p == nil || p.ExpiresAt == nil {
		return
	}
	timer := time.AfterFunc(time.Until(*p.ExpiresAt), func() {
		c.closeWith(CloseForbidden, "Forbidden: the token expired")
	})
	c.onRelease(func() { timer.Stop() })
}
