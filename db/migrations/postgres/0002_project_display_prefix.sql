-- Display ids are TU-<PROJECT>-<CAT>-<NNN>, where <PROJECT> is the project slug
-- upper-cased without its dashes (slugs hold only a-z, 0-9 and dashes), cut to
-- 8 characters. Two projects with the same <PROJECT> would hand out the same
-- display ids, so that prefix is unique like the slug itself.

-- +goose Up
CREATE UNIQUE INDEX projects_display_prefix_key ON projects (UPPER(SUBSTR(REPLACE(slug, '-', ''), 1, 8)));

-- +goose Down
DROP INDEX projects_display_prefix_key;
