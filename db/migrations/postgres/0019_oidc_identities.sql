-- +goose Up
-- Taskgraph schema: users who sign in with an OpenID Connect provider. A JWT's
-- (iss, sub) pair names its user for good (emails and usernames change); the
-- user is created on first use.
--
-- PostgreSQL dialect. db/migrations/sqlite/0019_oidc_identities.sql has the same
-- table, columns and constraint names.
CREATE TABLE oidc_identities (
    issuer     TEXT      NOT NULL,
    subject    TEXT      NOT NULL,
    user_id    UUID      NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT oidc_identities_pkey PRIMARY KEY (issuer, subject),
    CONSTRAINT oidc_identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE INDEX oidc_identities_user_id_idx ON oidc_identities (user_id);

-- +goose Down
DROP TABLE oidc_identities;
