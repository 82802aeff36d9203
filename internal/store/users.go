package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// CreateUser inserts a user.
func (q UserQueries) CreateUser(ctx context.Context, u *domain.User) error {
	if len(u.Settings) == 0 {
		u.Settings = domain.JSON("{}")
	}
	_, err := q.exec(ctx, `INSERT INTO users (id, slug, name, email, telegram_chat_id, settings, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.Slug, u.Name, u.Email, u.TelegramChatID, u.Settings, u.CreatedAt, u.UpdatedAt)
	return err
}

// UpdateUser writes a user's name, email, Telegram chat and settings.
func (q UserQueries) UpdateUser(ctx context.Context, u *domain.User) error {
	_, err := q.exec(ctx, `UPDATE users SET name = ?, email = ?, telegram_chat_id = ?, settings = ?, updated_at = ?
		WHERE id = ?`, u.Name, u.Email, u.TelegramChatID, u.Settings, u.UpdatedAt, u.ID)
	return err
}

// UserForUpdate loads a user, locking its row inside a PostgreSQL transaction.
func (q UserQueries) UserForUpdate(ctx context.Context, id string) (*domain.User, error) {
	var u domain.User
	if err := q.get(ctx, &u, `SELECT * FROM users WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &u, nil
}

// ChatHeldByOther says whether a user other than userID has Telegram chat.
func (q UserQueries) ChatHeldByOther(ctx context.Context, chat, userID string) (bool, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COUNT(*) FROM users WHERE telegram_chat_id = ? AND id <> ?`, chat, userID)
	return n > 0, err
}

// UsersByIDs loads users by id.
func (q UserQueries) UsersByIDs(ctx context.Context, ids []string) ([]*domain.User, error) {
	return byIDs[domain.User](ctx, q.Q, "users", ids)
}

// UserBySlug finds a user by slug.
func (q UserQueries) UserBySlug(ctx context.Context, slug string) (*domain.User, error) {
	var u domain.User
	if err := q.get(ctx, &u, `SELECT * FROM users WHERE slug = ?`, slug); err != nil {
		return nil, err
	}
	return &u, nil
}

// CountUsers counts every user.
func (q UserQueries) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COUNT(*) FROM users`)
	return n, err
}

// CreateAPIToken inserts a token (its hash only).
func (q UserQueries) CreateAPIToken(ctx context.Context, t *domain.APIToken) error {
	_, err := q.exec(ctx, `INSERT INTO api_tokens (id, user_id, name, role, project_id, token_hash, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, t.ID, t.UserID, t.Name, t.Role, t.ProjectID, t.TokenHash, t.CreatedAt)
	return err
}

// APITokenByHash finds a live (unrevoked) token by its hash. Every request
// runs it: prepared.
func (q UserQueries) APITokenByHash(ctx context.Context, hash string) (*domain.APIToken, error) {
	var t domain.APIToken
	if err := q.getP(ctx, &t, `SELECT * FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL`, hash); err != nil {
		return nil, err
	}
	return &t, nil
}

// TokenByHash is APITokenByHash for authenticating a request, outside any
// transaction: on PostgreSQL on the leases' pool (DB.lease), so that a
// request — an agent's heartbeat among them — never waits for a connection
// behind the main pool's transactions before it is even authenticated.
func (d *DB) TokenByHash(ctx context.Context, hash string) (*domain.APIToken, error) {
	if d.lease == nil {
		return d.Users.APITokenByHash(ctx, hash)
	}
	var t domain.APIToken
	d.statements.Add(1)
	query := `SELECT * FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL`
	ctx, span := d.startStatement(ctx, query, false)
	err := mapErr(d.sideGet(ctx, d.lease, &t, query, hash))
	endStatement(span, err)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// LiveTokenIDs returns which of ids are tokens that still authenticate: not
// revoked (a deleted user's tokens are deleted with it).
func (q UserQueries) LiveTokenIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	query, args := in(`SELECT id FROM api_tokens WHERE id IN (?) AND revoked_at IS NULL`, ids)
	var live []string
	if err := q.selectx(ctx, &live, query, args...); err != nil {
		return nil, err
	}
	for _, id := range live {
		out[id] = true
	}
	return out, nil
}

// APITokensByIDs loads tokens by id.
func (q UserQueries) APITokensByIDs(ctx context.Context, ids []string) ([]*domain.APIToken, error) {
	return byIDs[domain.APIToken](ctx, q.Q, "api_tokens", ids)
}

// APITokensByUsers lists the tokens of users, oldest first.
func (q UserQueries) APITokensByUsers(ctx context.Context, userIDs []string) ([]*domain.APIToken, error) {
	return byColumn[domain.APIToken](ctx, q.Q, "api_tokens", "user_id", userIDs, "created_at, id")
}

// RevokeAPIToken marks a token revoked.
func (q UserQueries) RevokeAPIToken(ctx context.Context, id string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, at, id)
	return err
}

// TouchAPIToken records when a token was last used.
func (q UserQueries) TouchAPIToken(ctx context.Context, id string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, at, id)
	return err
}

// DeleteRevokedToken removes a revoked token with this hash, so the bootstrap
// admin token given on the command line can be stored again.
func (q UserQueries) DeleteRevokedToken(ctx context.Context, hash string) error {
	_, err := q.exec(ctx, `DELETE FROM api_tokens WHERE token_hash = ? AND revoked_at IS NOT NULL`, hash)
	return err
}
