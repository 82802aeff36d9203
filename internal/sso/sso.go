// Package sso accepts OpenID Connect JWTs as bearer credentials: it verifies
// them against the issuer's discovery document and JSON Web Key Set (signature,
// issuer, audience, expiry, with a clock-skew allowance; an unknown key id
// refetches the key set, so the provider may rotate its keys at any time) and
// turns their claims into an Identity. Finding or creating the user is the
// service's business (service.Accounts.UserForIdentity).
package sso

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// Config configures New.
type Config struct {
	// Issuer is the provider's issuer URL; its
	// /.well-known/openid-configuration is fetched by New.
	Issuer string
	// Audience is the aud a JWT must carry; default ClientID.
	Audience string
	// ClientID is the dashboard's public client (authorization code + PKCE).
	ClientID string
	// RoleClaim names the claim whose value (ADMIN or MEMBER) is the user's
	// role; empty or absent: MEMBER.
	RoleClaim string
	// ClockSkew is allowed between the provider's clock and ours when
	// checking exp.
	ClockSkew time.Duration
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Verifier checks JWTs from one issuer.
type Verifier struct {
	cfg      Config
	verifier *oidc.IDTokenVerifier
	provider *oidc.Provider
}

// Identity is what a verified JWT says about its bearer.
type Identity struct {
	Issuer            string
	Subject           string
	PreferredUsername string
	Email             string
	Name              string
	Role              domain.Role
	ExpiresAt         time.Time
}

// New fetches the issuer's discovery document and returns a Verifier.
// ctx bounds the discovery request only.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("sso: no issuer")
	}
	if cfg.Audience == "" {
		cfg.Audience = cfg.ClientID
	}
	if cfg.Audience == "" {
		return nil, errors.New("sso: --oidc-audience or --oidc-client-id is required with --oidc-issuer")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	provider, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("sso: discovery of %s: %w", cfg.Issuer, err)
	}
	// The key set lives beyond New's ctx: it refetches on an unknown key id.
	keys := oidc.NewRemoteKeySet(context.WithoutCancel(ctx), jwksURL(provider))
	now, skew := cfg.Now, cfg.ClockSkew
	v := oidc.NewVerifier(cfg.Issuer, keys, &oidc.Config{
		ClientID: cfg.Audience,
		Now:      func() time.Time { return now().Add(-skew) },
	})
	return &Verifier{cfg: cfg, verifier: v, provider: provider}, nil
}

func jwksURL(p *oidc.Provider) string {
	var claims struct {
		JWKSURI string `json:"jwks_uri"`
	}
	_ = p.Claims(&claims)
	return claims.JWKSURI
}

// Issuer is the issuer the Verifier accepts.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// ClientID is the dashboard's public client id ("" when none).
func (v *Verifier) ClientID() string { return v.cfg.ClientID }

// Endpoints are the provider's authorization and token endpoints, from its
// discovery document: where the dashboard sends its users to sign in, and
// where it trades the code for tokens.
func (v *Verifier) Endpoints() (authorization, token string) {
	e := v.provider.Endpoint()
	return e.AuthURL, e.TokenURL
}

// LooksLikeJWT reports whether token has the shape of a compact JWS (three
// base64url parts), as opposed to an API token.
func LooksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && !strings.ContainsAny(token, " \t")
}

// ErrInvalid wraps every reason a JWT is refused (signature, issuer,
// audience, expiry, claims).
var ErrInvalid = errors.New("sso: invalid token")

// Verify checks token and returns its bearer's Identity.
func (v *Verifier) Verify(ctx context.Context, token string) (*Identity, error) {
	t, err := v.verifier.Verify(ctx, token)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var claims map[string]any
	if err := t.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: claims: %v", ErrInvalid, err)
	}
	if t.Subject == "" {
		return nil, fmt.Errorf("%w: no sub", ErrInvalid)
	}
	id := &Identity{Issuer: t.Issuer, Subject: t.Subject, ExpiresAt: t.Expiry, Role: domain.RoleMember,
		PreferredUsername: str(claims["preferred_username"]), Email: str(claims["email"]), Name: str(claims["name"])}
	if v.cfg.RoleClaim != "" {
		switch role := roleFrom(claims[v.cfg.RoleClaim]); role {
		case "":
		case string(domain.RoleAdmin), string(domain.RoleMember):
			id.Role = domain.Role(role)
		default:
			return nil, fmt.Errorf("%w: claim %s is %q, not ADMIN or MEMBER", ErrInvalid, v.cfg.RoleClaim, role)
		}
	}
	return id, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// roleFrom reads a role claim: a string, or a list of strings (groups) of
// which ADMIN wins over MEMBER.
func roleFrom(v any) string {
	switch r := v.(type) {
	case string:
		return strings.ToUpper(strings.TrimSpace(r))
	case []any:
		best := ""
		for _, x := range r {
			switch s := strings.ToUpper(strings.TrimSpace(str(x))); s {
			case string(domain.RoleAdmin):
				return s
			case string(domain.RoleMember):
				best = s
			}
		}
		return best
	}
	return ""
}
