package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/sso"
)

// authenticator resolves a bearer token: an OpenID Connect JWT when a
// verifier is configured and the token has a JWT's shape, an API token
// otherwise.
func authenticator(accounts *service.Accounts, v *sso.Verifier, log *slog.Logger) func(context.Context, string) (*auth.Principal, error) {
	if v == nil {
		return accounts.Authenticate
	}
	return func(ctx context.Context, token string) (*auth.Principal, error) {
		if !sso.LooksLikeJWT(token) {
			return accounts.Authenticate(ctx, token)
		}
		id, err := v.Verify(ctx, token)
		if errors.Is(err, sso.ErrInvalid) {
			server.LoggerFrom(ctx).DebugContext(ctx, "JWT refused", slog.String("reason", err.Error()))
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return accounts.AuthenticateIdentity(ctx, service.Identity{Issuer: id.Issuer, Subject: id.Subject,
			PreferredUsername: id.PreferredUsername, Email: id.Email, Name: id.Name, Role: id.Role, ExpiresAt: id.ExpiresAt})
	}
}

// ssoInfo is what the dashboard needs to offer "Sign in with …" (nil: no
// sign-in, when there is no verifier or no public client).
func ssoInfo(v *sso.Verifier) *server.SSOInfo {
	if v == nil || v.ClientID() == "" {
		return nil
	}
	authURL, tokenURL := v.Endpoints()
	return &server.SSOInfo{Issuer: v.Issuer(), ClientID: v.ClientID(),
		AuthorizationEndpoint: authURL, TokenEndpoint: tokenURL}
}
