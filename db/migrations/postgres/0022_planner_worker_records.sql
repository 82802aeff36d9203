-- +goose Up
-- What the design keeps of planners and workers: a planner's workings (what
-- its workers did, and how it came out) and its check of the user's request;
-- a worker's failed validations (criteria and message per attempt).
ALTER TABLE planners ADD COLUMN workings JSONB NOT NULL DEFAULT '[]';
ALTER TABLE planners ADD COLUMN request_validation JSONB;
ALTER TABLE workers ADD COLUMN failures JSONB NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE workers DROP COLUMN failures;
ALTER TABLE planners DROP COLUMN request_validation;
ALTER TABLE planners DROP COLUMN workings;
