package service

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Identity is a verified OpenID Connect JWT's bearer (internal/sso says so).
type Identity struct {
	Issuer, Subject                string
	PreferredUsername, Email, Name string
	Role                           domain.Role // ADMIN or MEMBER, from the role claim
	ExpiresAt                      time.Time
}

// maxIdentityText bounds the claims a user is created from.
const maxIdentityText = 320

// AuthenticateIdentity returns the Principal of a verified JWT's bearer: the
// user its (issuer, subject) names, created as a user on first use (slug from
// preferred_username or the email, made unique), with the JWT's role.
func (s *Accounts) AuthenticateIdentity(ctx context.Context, id Identity) (*auth.Principal, error) {
	if id.Issuer == "" || id.Subject == "" || len(id.Issuer) > 2048 || len(id.Subject) > 255 {
		return nil, nil
	}
	if id.Role != domain.RoleAdmin {
		id.Role = domain.RoleMember
	}
	userID, err := s.db.Users.UserIDByIdentity(ctx, id.Issuer, id.Subject)
	if errors.Is(err, store.ErrNotFound) {
		userID, err = s.createIdentityUser(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	exp := id.ExpiresAt
	return &auth.Principal{UserID: userID, Role: id.Role, ExpiresAt: &exp}, nil
}

func (s *Accounts) createIdentityUser(ctx context.Context, id Identity) (string, error) {
	email := strings.TrimSpace(id.Email)
	if !strings.Contains(email, "@") || len(email) > maxIdentityText {
		email = ""
	}
	base := identitySlug(id.PreferredUsername)
	if base == "" {
		local, _, _ := strings.Cut(email, "@")
		base = identitySlug(local)
	}
	if base == "" {
		base = "user"
	}
	name := strings.TrimSpace(id.Name)
	if name == "" || len(name) > maxIdentityText {
		name = base
	}
	var userID string
	create := func(tx *app.Tx) error {
		// A concurrent first request of the same user may have won.
		if existing, err := tx.Users.UserIDByIdentity(ctx, id.Issuer, id.Subject); err == nil {
			userID = existing
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		taken, err := tx.Users.UserSlugsLike(ctx, base, 1000)
		if err != nil {
			return err
		}
		slug := freeSlug(base, taken)
		if slug == "" {
			return domain.Errorf(domain.CodeConflict, "no free slug for %s", base)
		}
		now := s.now()
		u := &domain.User{ID: app.NewID(), Slug: slug, Name: name, Email: email, CreatedAt: now, UpdatedAt: now}
		if err := tx.Users.CreateUser(ctx, u); err != nil {
			return err
		}
		if err := tx.Users.CreateIdentity(ctx, id.Issuer, id.Subject, u.ID, now); err != nil {
			return err
		}
		userID = u.ID
		return nil
	}
	err := s.tx(ctx, create)
	if errors.Is(err, store.ErrUnique) {
		if strings.Contains(err.Error(), "email") {
			email = "" // another user has the address: this one goes without
		}
		// Or a racing first request took the identity or the slug: again.
		err = s.tx(ctx, create)
	}
	return userID, err
}

// identitySlug makes a slug of a username: lower case, runs of anything but
// letters and digits as one dash, at most 56 characters (room for "-N").
func identitySlug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= 56 {
				break
			}
		} else {
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// freeSlug is base, or base-N with the smallest N >= 2 not in taken.
func freeSlug(base string, taken []string) string {
	used := make(map[string]bool, len(taken))
	for _, t := range taken {
		used[t] = true
	}
	if !used[base] {
		return base
	}
	for n := 2; n <= len(taken)+2; n++ {
		if s := base + "-" + strconv.Itoa(n); !used[s] {
			return s
		}
	}
	return ""
}
