package store

import (
	"context"
	"strings"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// CreateProject inserts a project.
func (q ProjectQueries) CreateProject(ctx context.Context, p *domain.Project) error {
	if p.DisplayCode == "" {
		p.DisplayCode = domain.ProjectCode(p.Slug) // the slug's own; the service picks a free one
	}
	_, err := q.exec(ctx, `INSERT INTO projects (id, slug, name, description, owner_id, status, created_at, updated_at, display_code)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, p.ID, p.Slug, p.Name, p.Description, p.OwnerID, p.Status, p.CreatedAt, p.UpdatedAt, p.DisplayCode)
	return err
}

// SlugTaken reports whether a project has slug.
func (q ProjectQueries) SlugTaken(ctx context.Context, slug string) (bool, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COUNT(*) FROM projects WHERE slug = ?`, slug)
	return n > 0, err
}

// DisplayCodesFrom lists the display codes in use that start with stem
// (upper-case letters and digits: nothing LIKE would read as a pattern).
func (q ProjectQueries) DisplayCodesFrom(ctx context.Context, stem string) ([]string, error) {
	var codes []string
	err := q.selectx(ctx, &codes, `SELECT display_code FROM projects WHERE display_code LIKE ?`, stem+"%")
	return codes, err
}

// UpdateProject writes a project's editable fields.
func (q ProjectQueries) UpdateProject(ctx context.Context, p *domain.Project) error {
	_, err := q.exec(ctx, `UPDATE projects SET name = ?, description = ?, status = ?, updated_at = ? WHERE id = ?`,
		p.Name, p.Description, p.Status, p.UpdatedAt, p.ID)
	return err
}

// ProjectsByIDs loads projects by id.
func (q ProjectQueries) ProjectsByIDs(ctx context.Context, ids []string) ([]*domain.Project, error) {
	return byIDs[domain.Project](ctx, q.Q, "projects", ids)
}

// ProjectBySlug finds a project by slug.
func (q ProjectQueries) ProjectBySlug(ctx context.Context, slug string) (*domain.Project, error) {
	var p domain.Project
	if err := q.get(ctx, &p, `SELECT * FROM projects WHERE slug = ?`, slug); err != nil {
		return nil, err
	}
	return &p, nil
}

// scopeProjects restricts a query over projects aliased p to what scope may see.
func scopeProjects[T any](pq *pageQuery[T], scope domain.ProjectScope) {
	switch {
	case scope.All:
	case scope.ProjectID != "":
		pq.filter("p.id = ?", scope.ProjectID)
	default:
		pq.filter("p.owner_id = ?", scope.OwnerID)
	}
}

func projectPageQuery(scope domain.ProjectScope, f *domain.ProjectFilter, page domain.PageArgs) *pageQuery[*domain.Project] {
	pq := &pageQuery[*domain.Project]{
		selectCols: "p.*", from: "projects p", idCol: "p.id",
		key:   sortKey{col: "p.created_at", kind: keyTime},
		keyOf: func(p *domain.Project) any { return p.CreatedAt }, idOf: func(p *domain.Project) string { return p.ID },
		page: page,
	}
	scopeProjects(pq, scope)
	if f != nil {
		if len(f.Status) > 0 {
			pq.filter("p.status IN (?)", f.Status)
		}
		if f.Search != nil && strings.TrimSpace(*f.Search) != "" {
			like := likePattern(*f.Search)
			pq.filter("("+likeExpr("p.name")+" OR "+likeExpr("p.slug")+" OR "+likeExpr("p.description")+")", like, like, like)
		}
	}
	return pq
}

// Projects pages the projects scope may see.
func (q ProjectQueries) Projects(ctx context.Context, scope domain.ProjectScope, f *domain.ProjectFilter, page domain.PageArgs) (domain.Page[*domain.Project], error) {
	pq := projectPageQuery(scope, f, page)
	pages, err := pq.fetch(ctx, q.Q)
	if err != nil {
		return domain.Page[*domain.Project]{}, err
	}
	pg := pages[""]
	pg.Total = func(ctx context.Context) (int, error) {
		n, err := pq.count(ctx, q.db.pool())
		return n[""], err
	}
	return pg, nil
}

// ProjectsByOwners pages, per owner, the projects scope may see.
func (q ProjectQueries) ProjectsByOwners(ctx context.Context, scope domain.ProjectScope, owners []string, page domain.PageArgs) (map[string]domain.Page[*domain.Project], error) {
	pq := projectPageQuery(scope, nil, page)
	pq.parentCol, pq.parents, pq.parentOf = "p.owner_id", owners, func(p *domain.Project) string { return p.OwnerID }
	return pq.fetch(ctx, q.Q)
}

// CountProjectsByOwners counts, per owner, the projects scope may see.
func (q ProjectQueries) CountProjectsByOwners(ctx context.Context, scope domain.ProjectScope, owners []string) (map[string]int, error) {
	pq := projectPageQuery(scope, nil, domain.PageArgs{})
	pq.parentCol, pq.parents = "p.owner_id", owners
	return pq.count(ctx, q.Q)
}

// CreateIdea inserts an idea.
func (q ProjectQueries) CreateIdea(ctx context.Context, i *domain.Idea) error {
	_, err := q.exec(ctx, `INSERT INTO ideas (id, slug, project_id, name, description, lifecycle_stage, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, i.ID, i.Slug, i.ProjectID, i.Name, i.Description, i.LifecycleStage, i.CreatedAt, i.UpdatedAt)
	return err
}

// IdeasByIDs loads ideas by id.
func (q ProjectQueries) IdeasByIDs(ctx context.Context, ids []string) ([]*domain.Idea, error) {
	return byIDs[domain.Idea](ctx, q.Q, "ideas", ids)
}

func ideaPageQuery(projects []string, page domain.PageArgs) *pageQuery[*domain.Idea] {
	return &pageQuery[*domain.Idea]{
		selectCols: "i.*", from: "ideas i", idCol: "i.id",
		key:   sortKey{col: "i.created_at", kind: keyTime},
		keyOf: func(i *domain.Idea) any { return i.CreatedAt }, idOf: func(i *domain.Idea) string { return i.ID },
		parentCol: "i.project_id", parents: projects, parentOf: func(i *domain.Idea) string { return i.ProjectID },
		page: page,
	}
}

// IdeasByProjects pages ideas per project.
func (q ProjectQueries) IdeasByProjects(ctx context.Context, projects []string, page domain.PageArgs) (map[string]domain.Page[*domain.Idea], error) {
	return ideaPageQuery(projects, page).fetch(ctx, q.Q)
}

// CountIdeasByProjects counts ideas per project.
func (q ProjectQueries) CountIdeasByProjects(ctx context.Context, projects []string) (map[string]int, error) {
	return ideaPageQuery(projects, domain.PageArgs{}).count(ctx, q.Q)
}

// likeExpr is a case-insensitive match of col against a likePattern argument.
func likeExpr(col string) string { return "LOWER(" + col + ") LIKE ? ESCAPE '\\'" }

// likePattern is a case-insensitive LIKE pattern matching s anywhere; the caller
// compares it with LOWER(column).
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + strings.ToLower(r.Replace(strings.TrimSpace(s))) + "%"
}
