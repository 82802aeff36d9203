// Package auth holds the authenticated caller (Principal), how it travels in a
// context, and API token generation and hashing. Tokens are random, shown once,
// and stored only as their SHA-256 hash.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// Principal is the caller an API token or an OpenID Connect JWT authenticates.
type Principal struct {
	UserID    string
	TokenID   string
	Role      domain.Role
	ProjectID *string // set for AGENT tokens: the one project they may touch
	// ExpiresAt is set for OpenID Connect JWTs (internal/sso): the token's
	// exp. A websocket opened with it is closed then.
	ExpiresAt *time.Time
}

// IsAdmin reports whether the caller may do everything.
func (p *Principal) IsAdmin() bool { return p != nil && p.Role == domain.RoleAdmin }

type ctxKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the caller, or nil when the request is unauthenticated.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}

// TokenPrefix starts every generated token so that leaked ones are easy to grep for.
const TokenPrefix = "tg_"

// NewToken returns a fresh random token and the hash to store for it.
func NewToken() (plain, hash string) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("auth: crypto/rand failed: " + err.Error())
	}
	plain = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return plain, HashToken(plain)
}

// HashToken is the stored form of a token.
func HashToken(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// BearerToken extracts the token from an Authorization header value
// ("Bearer <token>"); it returns "" when there is none.
func BearerToken(header string) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
