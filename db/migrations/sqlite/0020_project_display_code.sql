-- +goose Up
-- A project's display code is the <PROJECT> of its tasks' display ids
-- (TU-<PROJECT>-<CAT>-<NNN>). It was derived from the slug and had to be
-- unique, so a slug whose first 8 letters or digits another project already
-- used was refused. Now it is stored: the slug's first 8 letters or digits
-- when free, else those cut short with a number (LOGIN → LOGIN2), chosen at
-- creation. Existing projects keep the code they had.
ALTER TABLE projects ADD COLUMN display_code TEXT NOT NULL DEFAULT '';
UPDATE projects SET display_code = UPPER(SUBSTR(REPLACE(slug, '-', ''), 1, 8));
DROP INDEX projects_display_prefix_key;
CREATE UNIQUE INDEX projects_display_code_key ON projects (display_code);

-- +goose Down
DROP INDEX projects_display_code_key;
CREATE UNIQUE INDEX projects_display_prefix_key ON projects (UPPER(SUBSTR(REPLACE(slug, '-', ''), 1, 8)));
ALTER TABLE projects DROP COLUMN display_code;
