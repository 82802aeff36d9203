-- +goose Up
-- similarTasks keeps a project's task vectors of a model in memory and
-- checks them with one read of their count and newest change: this index
-- answers it without reading the rows.
CREATE INDEX tasks_embedding_stamp_idx ON tasks (project_id, embedding_model, updated_at) WHERE embedding IS NOT NULL;

-- +goose Down
DROP INDEX tasks_embedding_stamp_idx;
