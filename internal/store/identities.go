package store

import (
	"context"
	"time"
)

// UserIDByIdentity finds the user an OpenID Connect (issuer, subject) names;
// ErrNotFound when none does yet.
func (q UserQueries) UserIDByIdentity(ctx context.Context, issuer, subject string) (string, error) {
	var id string
	if err := q.get(ctx, &id, `SELECT user_id FROM oidc_identities WHERE issuer = ? AND subject = ?`, issuer, subject); err != nil {
		return "", err
	}
	return id, nil
}

// CreateIdentity ties (issuer, subject) to userID; ErrUnique when the pair
// is already taken.
func (q UserQueries) CreateIdentity(ctx context.Context, issuer, subject, userID string, at time.Time) error {
	_, err := q.exec(ctx, `INSERT INTO oidc_identities (issuer, subject, user_id, created_at) VALUES (?, ?, ?, ?)`,
		issuer, subject, userID, at)
	return err
}

// UserSlugsLike returns the slugs that start with prefix (at most limit):
// what a new user's slug must differ from.
func (q UserQueries) UserSlugsLike(ctx context.Context, prefix string, limit int) ([]string, error) {
	var slugs []string
	err := q.selectx(ctx, &slugs, `SELECT slug FROM users WHERE slug = ? OR (slug >= ? AND slug < ?) ORDER BY slug LIMIT ?`,
		prefix, prefix+"-", prefix+".", limit)
	return slugs, err
}
