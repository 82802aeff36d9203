-- +goose Up
-- Refinements act: when a pass starts, the previous pass's refinements are
-- applied to the plan, and each step keeps what they changed of it (its
-- newest changes, as a JSON array).
ALTER TABLE reasoning_steps ADD COLUMN history JSONB NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE reasoning_steps DROP COLUMN history;
