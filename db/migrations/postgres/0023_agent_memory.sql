-- +goose Up
-- Agent memory: a lesson recorded again is reinforced instead of stored
-- twice (its key is now its scope, tool, context and lesson; reinforcements
-- counts the records, 1 at the first), and tasks and lessons carry embedding
-- vectors (little-endian float32) that similarTasks and lessons(similarTo:)
-- rank by cosine in the server, without a database extension.
ALTER TABLE lessons ADD COLUMN reinforcements INTEGER NOT NULL DEFAULT 1;
ALTER TABLE lessons ADD COLUMN embedding BYTEA;
ALTER TABLE lessons ADD COLUMN embedding_model TEXT;

-- The dimension of each embedding model in a project ('' scope: the global
-- lessons): set by its first vector, and every later vector of the model in
-- that scope must have it.
CREATE TABLE embedding_models (
    scope     TEXT    NOT NULL,
    model     TEXT    NOT NULL,
    dimension INTEGER NOT NULL,
    PRIMARY KEY (scope, model)
);
INSERT INTO embedding_models (scope, model, dimension)
    SELECT project_id, embedding_model, MIN(LENGTH(embedding) / 4) FROM tasks
    WHERE embedding IS NOT NULL AND embedding_model IS NOT NULL
    GROUP BY project_id, embedding_model;

-- The vectors a similarity search reads, page by page in id order.
CREATE INDEX tasks_embedding_model_idx ON tasks (project_id, embedding_model, id) WHERE embedding IS NOT NULL;
CREATE INDEX lessons_embedding_model_idx ON lessons (embedding_model, id) WHERE embedding IS NOT NULL;

-- +goose Down
DROP INDEX lessons_embedding_model_idx;
DROP INDEX tasks_embedding_model_idx;
DROP TABLE embedding_models;
ALTER TABLE lessons DROP COLUMN embedding_model;
ALTER TABLE lessons DROP COLUMN embedding;
ALTER TABLE lessons DROP COLUMN reinforcements;
