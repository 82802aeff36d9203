package grouping

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/grouping/cluster"
	"github.com/taskgraph/taskgraph/internal/store"
)

// dependencyTypes are the links the dependency criterion counts.
var dependencyTypes = []domain.RelationshipType{domain.RelDependsOn, domain.RelBlocks}

// notCandidate: COMPLETED tasks are never grouped.
var notCandidate = []domain.TaskStatus{domain.StatusCompleted}

// WeightsOf returns a project's grouping weights (the defaults until set).
func (s *Service) WeightsOf(ctx context.Context, projectID string) (domain.GroupingWeights, error) {
	return s.load(ctx).weights.Load(ctx, projectID)
}

// SetGroupingWeights stores a project's weights: each in [0, 1], summing to 1.
func (s *Service) SetGroupingWeights(ctx context.Context, in domain.SetGroupingWeightsInput) (domain.GroupingWeights, error) {
	p, err := writer(ctx)
	if err != nil {
		return domain.GroupingWeights{}, err
	}
	pr, err := s.project(ctx, p, in.ProjectID, "projectId")
	if err != nil {
		return domain.GroupingWeights{}, err
	}
	w := domain.GroupingWeights{FileOverlap: in.FileOverlap, Dependency: in.Dependency, Category: in.Category,
		DescriptionSimilarity: in.DescriptionSimilarity, Component: in.Component}
	if err := domain.CheckGroupingWeights(w); err != nil {
		return w, err
	}
	now := s.now()
	row := &domain.GroupingWeightsRow{ID: app.NewID(), ProjectID: pr.ID, FileOverlap: w.FileOverlap, Dependency: w.Dependency,
		Category: w.Category, DescriptionSimilarity: w.DescriptionSimilarity, Component: w.Component, CreatedAt: now, UpdatedAt: now}
	err = s.tx(ctx, func(tx *app.Tx) error { return tx.Grouping.UpsertWeights(ctx, row) })
	return w, err
}

func toCriteria(w domain.GroupingWeights) cluster.Criteria {
	return cluster.Criteria{FileOverlap: w.FileOverlap, Dependency: w.Dependency, Category: w.Category,
		DescriptionSimilarity: w.DescriptionSimilarity, Component: w.Component}
}

// clustering is one clustering of a project's candidates: the fingerprint
// of what it read (weights, candidates with their signatures and files,
// links), the candidates by id, and its groups at minScore.
type clustering struct {
	key        [sha256.Size]byte
	minScore   float64
	candidates map[string]*domain.Task
	groups     []cluster.Group
}

// clusterProject clusters projectID's candidates as read through q (the
// pool, or a transaction). When prev, done earlier on a snapshot, read the
// same inputs (same fingerprint, same minScore), its groups are reused: the
// reads are cheap (a signature of a few hundred bytes per task), the
// clustering is the work, and it need not happen again under the writer.
func (s *Service) clusterProject(ctx context.Context, q *store.Q, projectID string, minScore float64, prev *clustering) (*clustering, error) {
	rows, err := q.Grouping.WeightsOfProjects(ctx, []string{projectID})
	if err != nil {
		return nil, err
	}
	w := domain.DefaultGroupingWeights
	if len(rows) == 1 {
		w = rows[0].Weights()
	}
	tasks, err := q.Grouping.CandidateTasks(ctx, projectID, notCandidate, s.opts.MaxCandidates)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(tasks))
	byID := make(map[string]*domain.Task, len(tasks))
	for i, t := range tasks {
		ids[i], byID[t.ID] = t.ID, t
	}
	impacts, err := q.Grouping.ImpactPathsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	links, err := q.Grouping.LinksAmong(ctx, ids, dependencyTypes)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	field := func(ss ...string) {
		for _, x := range ss {
			_ = binary.Write(h, binary.LittleEndian, uint64(len(x)))
			h.Write([]byte(x))
		}
	}
	_ = binary.Write(h, binary.LittleEndian, [5]float64{w.FileOverlap, w.Dependency, w.Category, w.DescriptionSimilarity, w.Component})
	items := make([]cluster.Item, len(tasks))
	vectors := useVectors(tasks)
	for i, t := range tasks {
		// The text signature (written with the task) stands for the title
		// and description: a clustering reads and compares a bounded amount
		// per task, whatever the descriptions' size.
		sig := t.TextSignature
		if sig == nil {
			s := domain.TextSignature(t.Title, t.Description) // a prefix only: see CandidateTasks
			sig = &s
		}
		items[i] = cluster.Item{ID: t.ID, Key: t.DisplaySort, DisplayID: t.DisplayID, Title: t.Title,
			Category: string(t.Category), Files: append(slices.Clone([]string(t.AffectedFiles)), impacts[t.ID]...),
			Terms: domain.ParseTextSignature(*sig)}
		if vectors && t.EmbeddingModel != nil && len(t.Embedding) > 0 {
			items[i].Embedding, items[i].EmbeddingModel = domain.DecodeVector(nil, t.Embedding), *t.EmbeddingModel
		}
		field(t.ID, t.DisplaySort, t.DisplayID, t.Title, string(t.Category), *sig, items[i].EmbeddingModel, string(t.Embedding))
		field(items[i].Files...)
		field("")
	}
	ls := make([]cluster.Link, len(links))
	for i, r := range links {
		ls[i] = cluster.Link{A: r.SourceTaskID, B: r.TargetTaskID}
		field(r.SourceTaskID, r.TargetTaskID)
	}
	c := &clustering{minScore: minScore, candidates: byID}
	h.Sum(c.key[:0])
	if prev != nil && prev.key == c.key && prev.minScore == minScore {
		c.groups = prev.groups
		return c, nil
	}
	c.groups = cluster.NewModel(items, ls, toCriteria(w)).Cluster(minScore)
	return c, nil
}

// attribution says what made a group's suggestion (its trigger and trigger
// task), or false to leave the group out.
type attribution func(g cluster.Group) (domain.GroupingTrigger, *string, bool)

// suggest writes a PENDING suggestion for each group of c that attribute
// keeps and whose task set has none yet.
func (s *Service) suggest(ctx context.Context, tx *app.Tx, c *clustering, projectID string,
	agentID *string, attribute attribution) ([]*domain.GroupingSuggestion, error) {
	now, err := dbNow(ctx, tx)
	if err != nil {
		return nil, err
	}
	var out []*domain.GroupingSuggestion
	for _, g := range c.groups {
		trigger, triggerTask, ok := attribute(g)
		if !ok {
			continue
		}
		key := setKey(g.Members)
		exists, err := tx.Grouping.PendingSetExists(ctx, projectID, key)
		if err != nil {
			return nil, err
		}
		if exists {
			continue
		}
		sg := &domain.GroupingSuggestion{ID: app.NewID(), ProjectID: projectID, Status: domain.SuggestionPending,
			SuggestedName: g.Name, TaskIDs: domain.Strings(g.Members), TaskSetKey: key, GroupingReason: g.Reason,
			SimilarityScore: g.Score, FileOverlap: g.Breakdown.FileOverlap, Dependency: g.Breakdown.Dependency,
			Category: g.Breakdown.Category, DescriptionSimilarity: g.Breakdown.DescriptionSimilarity,
			Component: g.Breakdown.Component, TriggeredBy: trigger, TriggerTaskID: triggerTask, TaskAgentID: agentID,
			ExpiresAt: now.Add(domain.SuggestionLifetime), CreatedAt: now}
		if err := tx.Grouping.InsertSuggestion(ctx, sg); err != nil {
			return nil, err
		}
		tx.Record(domain.NewSuggestionCreated(sg, now))
		out = append(out, sg)
	}
	if agentID != nil && len(out) > 0 {
		if err := tx.Grouping.CountSuggestionMade(ctx, *agentID, len(out)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// setKey names a task set independently of order.
func setKey(ids []string) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return strings.Join(ids, ",")
}

// SuggestGroupings clusters the project's candidate tasks now (MANUAL) and
// returns the suggestions it made; groups already PENDING are not repeated.
func (s *Service) SuggestGroupings(ctx context.Context, in domain.SuggestGroupingsInput) ([]*domain.GroupingSuggestion, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := s.project(ctx, p, in.ProjectID, "projectId")
	if err != nil {
		return nil, err
	}
	minScore := domain.DefaultMinScore
	if in.MinScore != nil {
		minScore = *in.MinScore
		if minScore < 0 || minScore > 1 || minScore != minScore {
			return nil, domain.InputError("minScore", "minScore must be between 0 and 1")
		}
	}
	var agentID *string
	if in.TaskAgentID != nil {
		id, err := domain.DecodeID(domain.KindTaskAgent, *in.TaskAgentID, "taskAgentId")
		if err != nil {
			return nil, err
		}
		agentID = &id
	}
	// Cluster on a snapshot first, off the writer; inside, the same inputs
	// reuse its groups.
	pre, err := s.clusterProject(ctx, &s.db.Q, pr.ID, minScore, nil)
	if err != nil {
		return nil, err
	}
	var out []*domain.GroupingSuggestion
	err = s.tx(ctx, func(tx *app.Tx) error {
		if agentID != nil {
			a, err := tx.Grouping.TaskAgentForUpdate(ctx, *agentID)
			if errors.Is(err, store.ErrNotFound) || (err == nil && a.ProjectID != pr.ID) {
				return domain.NotFound("TaskAgentInstance")
			} else if err != nil {
				return err
			}
			if a.Status == domain.TaskAgentTerminated {
				return &domain.Error{Code: domain.CodeConflict, Field: "taskAgentId", Message: "the task agent is terminated"}
			}
		}
		if err := tx.Tasks.LockProjectGraph(ctx, pr.ID); err != nil {
			return err
		}
		c, err := s.clusterProject(ctx, tx.Q, pr.ID, minScore, pre)
		if err != nil {
			return err
		}
		out, err = s.suggest(ctx, tx, c, pr.ID, agentID, func(cluster.Group) (domain.GroupingTrigger, *string, bool) {
			return domain.TriggerManual, nil, true
		})
		return err
	})
	if out == nil {
		out = []*domain.GroupingSuggestion{}
	}
	return out, err
}

// visibleSuggestion loads a suggestion the caller may see.
func (s *Service) visibleSuggestion(ctx context.Context, p *auth.Principal, gid, field string) (*domain.GroupingSuggestion, error) {
	id, err := domain.DecodeID(domain.KindGroupingSuggestion, gid, field)
	if err != nil {
		return nil, err
	}
	sg, err := s.SuggestionByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if sg == nil {
		return nil, domain.NotFound("GroupingSuggestion")
	}
	if _, err := s.project(ctx, p, domain.GlobalID(domain.KindProject, sg.ProjectID), field); err != nil {
		return nil, domain.NotFound("GroupingSuggestion")
	}
	return sg, nil
}

// lockPending re-reads a suggestion under a row lock and checks it is still
// PENDING and none of its tasks has joined a list.
func lockPending(ctx context.Context, tx *app.Tx, id string) (*domain.GroupingSuggestion, []*domain.Task, error) {
	sg, err := tx.Grouping.SuggestionForUpdate(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if sg.Status != domain.SuggestionPending {
		return nil, nil, domain.Errorf(domain.CodeConflict, "the suggestion is %s, not PENDING", sg.Status)
	}
	tasks, err := tx.Tasks.TasksByIDs(ctx, sg.TaskIDs)
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]*domain.Task{}
	for _, t := range tasks {
		byID[t.ID] = t
	}
	ordered := make([]*domain.Task, 0, len(sg.TaskIDs))
	for _, id := range sg.TaskIDs {
		t := byID[id]
		if t == nil {
			return nil, nil, domain.Errorf(domain.CodeConflict, "a task of the suggestion no longer exists")
		}
		if t.TaskListID != nil {
			return nil, nil, domain.Errorf(domain.CodeConflict, "task %s has joined a task list meanwhile", t.DisplayID)
		}
		ordered = append(ordered, t)
	}
	return sg, ordered, nil
}

// AcceptGroupingSuggestion turns a PENDING suggestion into a task list, in one
// transaction: with all its tasks (ACCEPTED) or the subset taskIds (MODIFIED).
func (s *Service) AcceptGroupingSuggestion(ctx context.Context, in domain.AcceptGroupingSuggestionInput) (*domain.GroupingSuggestion, *domain.TaskList, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, nil, err
	}
	sg0, err := s.visibleSuggestion(ctx, p, in.ID, "id")
	if err != nil {
		return nil, nil, err
	}
	name := sg0.SuggestedName
	if in.Name != nil {
		if name, err = domain.CheckText("name", *in.Name, domain.MaxName, true); err != nil {
			return nil, nil, err
		}
	}
	var subset []string
	if in.TaskIDs != nil {
		if len(in.TaskIDs) == 0 {
			return nil, nil, domain.InputError("taskIds", "give at least one task")
		}
		if len(in.TaskIDs) > 500 {
			return nil, nil, domain.InputError("taskIds", "at most 500 tasks")
		}
		seen := map[string]bool{}
		for _, gid := range in.TaskIDs {
			id, err := domain.DecodeID(domain.KindTask, gid, "taskIds")
			if err != nil {
				return nil, nil, err
			}
			if !slices.Contains(sg0.TaskIDs, id) {
				return nil, nil, domain.InputError("taskIds", "task %s is not part of the suggestion", gid)
			}
			if seen[id] {
				return nil, nil, domain.InputError("taskIds", "task %s is listed twice", gid)
			}
			seen[id] = true
			subset = append(subset, id)
		}
	}
	var list *domain.TaskList
	var sg *domain.GroupingSuggestion
	err = s.tx(ctx, func(tx *app.Tx) error {
		var tasks []*domain.Task
		var err error
		sg, tasks, err = lockPending(ctx, tx, sg0.ID)
		if err != nil {
			return err
		}
		status := domain.SuggestionAccepted
		if subset != nil && len(subset) < len(tasks) {
			status = domain.SuggestionModified
			keep := tasks[:0]
			for _, t := range tasks {
				if slices.Contains(subset, t.ID) {
					keep = append(keep, t)
				}
			}
			tasks = keep
		}
		now, err := dbNow(ctx, tx)
		if err != nil {
			return err
		}
		list = &domain.TaskList{ID: app.NewID(), Name: name, ProjectID: sg.ProjectID, UserID: p.UserID,
			Description: sg.GroupingReason, Status: domain.ListDraft, MaxParallelAgents: 3, CreatedAt: now, UpdatedAt: now}
		if len(list.Description) > domain.MaxDescription {
			list.Description = list.Description[:domain.MaxDescription]
		}
		if err := s.core.Lists.CreateTaskListTx(ctx, tx, p, list, tasks); err != nil {
			return err
		}
		actor := app.Actor(p)
		sg.Status, sg.CreatedTaskListID, sg.ResolvedBy, sg.ResolvedAt = status, &list.ID, &actor, &now
		if err := tx.Grouping.ResolveSuggestion(ctx, sg); err != nil {
			return err
		}
		tx.Record(domain.NewSuggestionResolved(sg, now))
		return nil
	})
	if err != nil {
		return nil, nil, notFoundAs(err, "GroupingSuggestion")
	}
	l, err := s.core.Lists.TaskListByID(ctx, &list.ID)
	return sg, l, err
}

// RejectGroupingSuggestion closes a PENDING suggestion as REJECTED.
func (s *Service) RejectGroupingSuggestion(ctx context.Context, in domain.RejectGroupingSuggestionInput) (*domain.GroupingSuggestion, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	sg0, err := s.visibleSuggestion(ctx, p, in.ID, "id")
	if err != nil {
		return nil, err
	}
	if _, err := domain.CheckText("reason", deref(in.Reason), domain.MaxDescription, false); err != nil {
		return nil, err
	}
	var sg *domain.GroupingSuggestion
	err = s.tx(ctx, func(tx *app.Tx) error {
		var err error
		if sg, _, err = lockPending(ctx, tx, sg0.ID); err != nil {
			return err
		}
		now, err := dbNow(ctx, tx)
		if err != nil {
			return err
		}
		actor := app.Actor(p)
		sg.Status, sg.ResolvedBy, sg.ResolvedAt = domain.SuggestionRejected, &actor, &now
		if err := tx.Grouping.ResolveSuggestion(ctx, sg); err != nil {
			return err
		}
		tx.Record(domain.NewSuggestionResolved(sg, now))
		return nil
	})
	return sg, notFoundAs(err, "GroupingSuggestion")
}

func notFoundAs(err error, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return domain.NotFound(what)
	}
	return err
}

// expireBatch bounds the suggestions one sweep expires.
const expireBatch = 200

// ExpireSuggestions expires PENDING suggestions past expiresAt by the
// database clock; each replica may run it, rows are taken FOR UPDATE SKIP
// LOCKED and re-checked, so each expires once.
func (s *Service) ExpireSuggestions(ctx context.Context) (int, error) {
	n := 0
	err := s.tx(ctx, func(tx *app.Tx) error {
		n = 0
		now, err := dbNow(ctx, tx)
		if err != nil {
			return err
		}
		rows, err := tx.Grouping.ExpiredSuggestionsForUpdate(ctx, now, expireBatch)
		if err != nil {
			return err
		}
		system := "system"
		for _, sg := range rows {
			sg.Status, sg.ResolvedBy, sg.ResolvedAt = domain.SuggestionExpired, &system, &now
			if err := tx.Grouping.ResolveSuggestion(ctx, sg); err != nil {
				return err
			}
			tx.Record(domain.NewSuggestionResolved(sg, now))
			n++
		}
		return nil
	})
	return n, err
}

// maxVectorWork bounds the multiply-adds a clustering spends comparing
// embeddings (pairs × dimension; about 50 ms of one core): 360 tasks of 768
// dimensions. Past it, descriptions are compared by their words alone.
const maxVectorWork = 50_000_000

// useVectors reports whether a clustering of tasks compares their
// embeddings: every pair is compared, each in time of its dimension.
func useVectors(tasks []*domain.Task) bool {
	withVector, dims := 0, 0
	for _, t := range tasks {
		if t.EmbeddingModel != nil && len(t.Embedding) > 0 {
			withVector++
			dims = max(dims, len(t.Embedding)/4)
		}
	}
	return withVector > 1 && withVector*(withVector-1)/2*dims <= maxVectorWork
}
