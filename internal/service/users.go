package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Authenticate resolves a bearer token to its principal; an unknown or revoked
// token gives (nil, nil).
func (s *Accounts) Authenticate(ctx context.Context, token string) (*auth.Principal, error) {
	if token == "" {
		return nil, nil
	}
	t, err := s.db.TokenByHash(ctx, auth.HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Record use at most once a minute, so authenticating is a read, not a write.
	if now := s.now(); t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) > time.Minute {
		if err := s.db.Users.TouchAPIToken(ctx, t.ID, now); err != nil {
			s.logger(ctx).WarnContext(ctx, "recording token use failed", "err", err)
		}
	}
	return &auth.Principal{UserID: t.UserID, TokenID: t.ID, Role: t.Role, ProjectID: t.ProjectID}, nil
}

// LiveTokens reports which of the given token ids still authenticate; the
// server closes websockets opened with any other.
func (s *Accounts) LiveTokens(ctx context.Context, tokenIDs []string) (map[string]bool, error) {
	return s.db.Users.LiveTokenIDs(ctx, tokenIDs)
}

// BootstrapAdmin makes sure an admin can log in. With adminToken set, that exact
// string authenticates as the bootstrap admin (created if missing). Without it, on
// a database with no users, it creates the admin and returns a new token to print
// once; otherwise it returns "".
func (s *Accounts) BootstrapAdmin(ctx context.Context, adminToken string) (string, error) {
	var printed string
	bootstrap := func(tx *app.Tx) error {
		printed = ""
		admin, err := tx.Users.UserBySlug(ctx, "admin")
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if adminToken == "" {
			if n, err := tx.Users.CountUsers(ctx); err != nil || n > 0 {
				return err
			}
		}
		now := s.now()
		if admin == nil {
			admin = &domain.User{ID: app.NewID(), Slug: "admin", Name: "Administrator", Email: "", CreatedAt: now, UpdatedAt: now}
			if err := tx.Users.CreateUser(ctx, admin); err != nil {
				return err
			}
		}
		plain, hash := adminToken, auth.HashToken(adminToken)
		if adminToken == "" {
			plain, hash = auth.NewToken()
			printed = plain
		} else if _, err := tx.Users.APITokenByHash(ctx, hash); err == nil {
			return nil // already there
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		} else if err := tx.Users.DeleteRevokedToken(ctx, hash); err != nil {
			return err
		}
		return tx.Users.CreateAPIToken(ctx, &domain.APIToken{ID: app.NewID(), UserID: admin.ID, Name: "bootstrap",
			Role: domain.RoleAdmin, TokenHash: hash, CreatedAt: now})
	}
	err := s.tx(ctx, bootstrap)
	if errors.Is(err, store.ErrUnique) {
		// Replicas starting together race to create the admin (or its token); the
		// loser hits a unique key and, trying again, finds what the winner made.
		err = s.tx(ctx, bootstrap)
	}
	return printed, err
}

// Viewer is the caller's user.
func (s *Accounts) Viewer(ctx context.Context) (*domain.User, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.load(ctx).users.Get(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, domain.Errorf(domain.CodeUnauthenticated, "the token's user no longer exists")
	}
	return u, nil
}

// User loads a user by id for nested fields.
func (s *Accounts) User(ctx context.Context, id string) (*domain.User, error) {
	return s.load(ctx).users.Load(ctx, id)
}

// VisibleUser loads a user another entity names (who uploaded a trace,
// created or claimed an example): nil when the caller may not see users other
// than itself (AGENT tokens), as node() would answer.
func (s *Accounts) VisibleUser(ctx context.Context, id *string) (*domain.User, error) {
	if id == nil {
		return nil, nil
	}
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if !canSeeUser(p, *id) {
		return nil, nil
	}
	return s.load(ctx).users.Load(ctx, *id)
}

// canSeeUser: admins and members see the user directory; agents only themselves.
func canSeeUser(p *auth.Principal, userID string) bool {
	return p.Role != domain.RoleAgent || p.UserID == userID
}

// CreateUser creates a user (ADMIN only).
func (s *Accounts) CreateUser(ctx context.Context, in domain.CreateUserInput) (*domain.User, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if !p.IsAdmin() {
		return nil, domain.Forbidden("only an admin can create users")
	}
	name, err := domain.CheckText("name", in.Name, domain.MaxName, true)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckSlug("slug", in.Slug); err != nil {
		return nil, err
	}
	email := strings.TrimSpace(in.Email)
	if email != "" && (!strings.Contains(email, "@") || len(email) > 320) {
		return nil, domain.InputError("email", "%q is not an email address", email)
	}
	settings := in.Settings
	if len(settings) > 0 && settings[0] != '{' {
		return nil, domain.InputError("settings", "settings must be a JSON object")
	}
	now := s.now()
	u := &domain.User{ID: app.NewID(), Slug: in.Slug, Name: name, Email: email, TelegramChatID: in.TelegramChatID,
		Settings: settings, CreatedAt: now, UpdatedAt: now}
	err = s.tx(ctx, func(tx *app.Tx) error { return tx.Users.CreateUser(ctx, u) })
	if errors.Is(err, store.ErrUnique) {
		if strings.Contains(err.Error(), "telegram_chat_id") {
			return nil, &domain.Error{Code: domain.CodeConflict, Field: "telegramChatId",
				Message: "another user has this telegramChatId"}
		}
		if strings.Contains(err.Error(), "email") {
			return nil, &domain.Error{Code: domain.CodeConflict, Field: "email", Message: "a user with this email exists"}
		}
		return nil, &domain.Error{Code: domain.CodeConflict, Field: "slug", Message: "slug " + in.Slug + " is taken"}
	}
	return u, err
}

// CreateAPIToken creates a token and returns its secret once. Admins may create any
// token; members tokens for themselves: MEMBER, or AGENT on a project they own.
func (s *Accounts) CreateAPIToken(ctx context.Context, in domain.CreateAPITokenInput) (string, *domain.APIToken, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return "", nil, err
	}
	if p.Role == domain.RoleAgent {
		return "", nil, domain.Forbidden("agent tokens cannot create tokens")
	}
	userID, err := domain.DecodeID(domain.KindUser, in.UserID, "userId")
	if err != nil {
		return "", nil, err
	}
	name, err := domain.CheckText("name", in.Name, domain.MaxName, true)
	if err != nil {
		return "", nil, err
	}
	if !p.IsAdmin() && (userID != p.UserID || in.Role == domain.RoleAdmin) {
		return "", nil, domain.Forbidden("members can create MEMBER and AGENT tokens for themselves only")
	}
	if u, err := s.load(ctx).users.Get(ctx, userID); err != nil {
		return "", nil, err
	} else if u == nil {
		return "", nil, domain.NotFound("user")
	}
	var projectID *string
	switch {
	case in.Role == domain.RoleAgent && in.ProjectID == nil:
		return "", nil, domain.InputError("projectId", "an AGENT token needs the project it is bound to")
	case in.Role != domain.RoleAgent && in.ProjectID != nil:
		return "", nil, domain.InputError("projectId", "only AGENT tokens are bound to a project")
	case in.ProjectID != nil:
		project, err := s.Projects.writableProject(ctx, p, *in.ProjectID, "projectId")
		if err != nil {
			return "", nil, err
		}
		projectID = &project.ID
	}
	plain, hash := auth.NewToken()
	t := &domain.APIToken{ID: app.NewID(), UserID: userID, Name: name, Role: in.Role, ProjectID: projectID,
		TokenHash: hash, CreatedAt: s.now()}
	if err := s.tx(ctx, func(tx *app.Tx) error { return tx.Users.CreateAPIToken(ctx, t) }); err != nil {
		return "", nil, err
	}
	return plain, t, nil
}

// RevokeAPIToken revokes a token: an admin any, a member their own.
func (s *Accounts) RevokeAPIToken(ctx context.Context, in domain.RevokeAPITokenInput) (*domain.APIToken, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if p.Role == domain.RoleAgent {
		return nil, domain.Forbidden("agent tokens cannot revoke tokens")
	}
	id, err := domain.DecodeID(domain.KindAPIToken, in.ID, "id")
	if err != nil {
		return nil, err
	}
	t, err := s.load(ctx).tokens.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if t == nil || !(p.IsAdmin() || t.UserID == p.UserID) {
		return nil, domain.NotFound("API token")
	}
	if t.RevokedAt == nil {
		if err := s.tx(ctx, func(tx *app.Tx) error { return tx.Users.RevokeAPIToken(ctx, id, s.now()) }); err != nil {
			return nil, err
		}
	}
	return s.load(ctx).tokens.Get(ctx, id)
}

// APITokensOfUser lists a user's tokens, to that user and admins only.
func (s *Accounts) APITokensOfUser(ctx context.Context, userID string) ([]*domain.APIToken, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if !p.IsAdmin() && p.UserID != userID {
		return []*domain.APIToken{}, nil
	}
	toks, err := s.load(ctx).tokensOfUser.Load(ctx, userID)
	if toks == nil && err == nil {
		toks = []*domain.APIToken{}
	}
	return toks, err
}

// UpdateUser changes a user's name, email, Telegram chat and settings; nil
// fields keep their values. A user changes itself, an admin anyone: a MEMBER
// changing another user is FORBIDDEN; an AGENT token is FORBIDDEN for its own
// user and sees no other (NOT_FOUND). A Telegram chat another user holds is
// CONFLICT.
func (s *Accounts) UpdateUser(ctx context.Context, in domain.UpdateUserInput) (*domain.User, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindUser, in.ID, "id")
	if err != nil {
		return nil, err
	}
	u, err := s.load(ctx).users.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if u == nil || !canSeeUser(p, id) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: "id", Message: "user not found"}
	}
	if p.Role == domain.RoleAgent {
		return nil, domain.Forbidden("agent tokens cannot change users")
	}
	if !p.IsAdmin() && p.UserID != id {
		return nil, domain.Forbidden("only the user itself or an admin can change a user")
	}
	var name, email *string
	if in.Name != nil {
		n, err := domain.CheckText("name", *in.Name, domain.MaxName, true)
		if err != nil {
			return nil, err
		}
		name = &n
	}
	if in.Email != nil {
		e := strings.TrimSpace(*in.Email)
		if e != "" && (!strings.Contains(e, "@") || len(e) > 320) {
			return nil, domain.InputError("email", "%q is not an email address", e)
		}
		email = &e
	}
	if len(in.Settings) > 0 && in.Settings[0] != '{' {
		return nil, domain.InputError("settings", "settings must be a JSON object")
	}
	chat, err := checkChatID(in.TelegramChatID)
	if err != nil {
		return nil, err
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		cur, err := tx.Users.UserForUpdate(ctx, id)
		if err != nil {
			return app.NotFound(err, "user")
		}
		setIf(&cur.Name, name)
		setIf(&cur.Email, email)
		if in.TelegramChatID != nil {
			if chat != nil {
				held, err := tx.Users.ChatHeldByOther(ctx, *chat, id)
				if err != nil {
					return err
				}
				if held {
					return &domain.Error{Code: domain.CodeConflict, Field: "telegramChatId",
						Message: "another user has this Telegram chat"}
				}
			}
			cur.TelegramChatID = chat
		}
		if len(in.Settings) > 0 {
			cur.Settings = in.Settings
		}
		cur.UpdatedAt = s.now()
		return tx.Users.UpdateUser(ctx, cur)
	})
	if errors.Is(err, store.ErrUnique) {
		if strings.Contains(err.Error(), "email") {
			return nil, &domain.Error{Code: domain.CodeConflict, Field: "email", Message: "a user with this email exists"}
		}
		return nil, &domain.Error{Code: domain.CodeConflict, Field: "telegramChatId", Message: "another user has this Telegram chat"}
	}
	if err != nil {
		return nil, err
	}
	return one(s.db.Users.UsersByIDs(ctx, []string{id}))
}
