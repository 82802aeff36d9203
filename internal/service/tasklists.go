package service

import (
	"context"
	"strings"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// CreateTaskList creates a list, optionally filled with tasks in the given order.
func (s *Lists) CreateTaskList(ctx context.Context, in domain.CreateTaskListInput) (*domain.TaskList, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	project, err := s.Projects.writableProject(ctx, p, in.ProjectID, "projectId")
	if err != nil {
		return nil, err
	}
	name, err := domain.CheckText("name", in.Name, domain.MaxName, true)
	if err != nil {
		return nil, err
	}
	desc, err := domain.CheckText("description", deref(in.Description), domain.MaxDescription, false)
	if err != nil {
		return nil, err
	}
	maxAgents := orDefault(in.MaxParallelAgents, 3)
	if err := checkMaxParallelAgents(maxAgents); err != nil {
		return nil, err
	}
	schedule := orDefault(in.Schedule, domain.DefaultSchedule)
	if !schedule.Valid() {
		return nil, domain.InputError("schedule", "schedule must be WAVES or EAGER")
	}
	runSchedule, sched, err := checkRunSchedule(in.RunSchedule)
	if err != nil {
		return nil, err
	}
	chat, err := checkChatID(in.TelegramChatID)
	if err != nil {
		return nil, err
	}
	tasks, err := s.tasksForList(ctx, p, project.ID, in.TaskIDs, "taskIds")
	if err != nil {
		return nil, err
	}
	now := s.now()
	l := &domain.TaskList{ID: app.NewID(), Name: name, Description: desc, ProjectID: project.ID, UserID: p.UserID,
		Status: domain.ListDraft, MaxParallelAgents: maxAgents, Schedule: schedule, AutoExecute: deref(in.AutoExecute),
		RunSchedule: runSchedule, NextScheduledRunAt: nextTick(sched, now), TelegramChatID: chat,
		CreatedAt: now, UpdatedAt: now}
	err = s.tx(ctx, func(tx *app.Tx) error { return s.CreateTaskListTx(ctx, tx, p, l, tasks) })
	if err != nil {
		return nil, err
	}
	return s.load(ctx).lists.Get(ctx, l.ID)
}

// CreateTaskListTx inserts list l and moves tasks into it, in order, inside
// the caller's transaction: other domains (accepting a grouping suggestion)
// create lists through it, so whatever list creation checks applies to them.
func (s *Lists) CreateTaskListTx(ctx context.Context, tx *app.Tx, p *auth.Principal, l *domain.TaskList, tasks []*domain.Task) error {
	if l.Schedule == "" {
		l.Schedule = domain.DefaultSchedule
	}
	if err := tx.Lists.InsertTaskList(ctx, l); err != nil {
		return err
	}
	return s.addToList(ctx, tx, p, l.ID, tasks)
}

// checkMaxParallelAgents checks a list's limit of agents at once.
func checkMaxParallelAgents(n int) error {
	if n < 1 || n > 100 {
		return domain.InputError("maxParallelAgents", "maxParallelAgents must be between 1 and 100")
	}
	return nil
}

// UpdateTaskList changes a list's name, description and execution settings;
// fields left out keep their values. A run keeps the maxParallelAgents and
// schedule it started with: the change applies from the list's next run.
func (s *Lists) UpdateTaskList(ctx context.Context, in domain.UpdateTaskListInput) (*domain.TaskList, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.writableList(ctx, p, in.ID, "id")
	if err != nil {
		return nil, err
	}
	var name, desc *string
	if in.Name != nil {
		n, err := domain.CheckText("name", *in.Name, domain.MaxName, true)
		if err != nil {
			return nil, err
		}
		name = &n
	}
	if in.Description != nil {
		d, err := domain.CheckText("description", *in.Description, domain.MaxDescription, false)
		if err != nil {
			return nil, err
		}
		desc = &d
	}
	if in.MaxParallelAgents != nil {
		if err := checkMaxParallelAgents(*in.MaxParallelAgents); err != nil {
			return nil, err
		}
	}
	if in.Schedule != nil && !in.Schedule.Valid() {
		return nil, domain.InputError("schedule", "schedule must be WAVES or EAGER")
	}
	runSchedule, sched, err := checkRunSchedule(in.RunSchedule)
	if err != nil {
		return nil, err
	}
	chat, err := checkChatID(in.TelegramChatID)
	if err != nil {
		return nil, err
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		cur, err := tx.Lists.TaskListForUpdate(ctx, l.ID)
		if err != nil {
			return app.NotFound(err, "task list")
		}
		setIf(&cur.Name, name)
		setIf(&cur.Description, desc)
		setIf(&cur.MaxParallelAgents, in.MaxParallelAgents)
		setIf(&cur.AutoExecute, in.AutoExecute)
		setIf(&cur.Schedule, in.Schedule)
		now := s.now()
		if in.RunSchedule != nil {
			// A new schedule counts from now: no run for ticks before it.
			cur.RunSchedule, cur.NextScheduledRunAt = runSchedule, nextTick(sched, now)
		}
		if in.TelegramChatID != nil {
			cur.TelegramChatID = chat
		}
		cur.UpdatedAt = now
		return tx.Lists.UpdateTaskListSettings(ctx, cur)
	})
	if err != nil {
		return nil, err
	}
	return s.load(ctx).lists.Get(ctx, l.ID)
}

// tasksForList decodes task ids, each once, all visible and in the project.
func (s *Lists) tasksForList(ctx context.Context, p *auth.Principal, projectID string, gids []string, field string) ([]*domain.Task, error) {
	if len(gids) > 500 {
		return nil, domain.InputError(field, "at most 500 tasks at once")
	}
	seen := map[string]bool{}
	out := make([]*domain.Task, 0, len(gids))
	for _, gid := range gids {
		t, _, err := s.Tasks.visibleTask(ctx, p, gid, field)
		if err != nil {
			return nil, err
		}
		if t.ProjectID != projectID {
			return nil, domain.InputError(field, "task %s is in another project", t.DisplayID)
		}
		if seen[t.ID] {
			return nil, domain.InputError(field, "task %s is listed twice", t.DisplayID)
		}
		seen[t.ID] = true
		out = append(out, t)
	}
	return out, nil
}

// addToList moves tasks into a list in order; tasks already in it stay put.
func (s *Lists) addToList(ctx context.Context, tx *app.Tx, p *auth.Principal, listID string, tasks []*domain.Task) error {
	now := s.now()
	for _, t0 := range tasks {
		t, err := lockTask(ctx, tx, t0.ID, nil)
		if err != nil {
			return err
		}
		if deref(t.TaskListID) == listID {
			continue
		}
		before := *t
		if err := s.Tasks.moveToList(ctx, tx, p, t, listID, now); err != nil {
			return err
		}
		t.UpdatedAt = now
		if err := tx.Tasks.UpdateTask(ctx, t); err != nil {
			return err
		}
		tx.Record(domain.NewTaskUpdated(t, domain.ChangedTaskFields(&before, t), now))
	}
	return nil
}

// AddTasksToList appends tasks to a list; they leave the evaluation queue (or
// their old list), and DRAFT or EVALUATING ones become PENDING.
func (s *Lists) AddTasksToList(ctx context.Context, in domain.AddTasksToListInput) (*domain.TaskList, []*domain.TaskListItem, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	l, err := s.writableList(ctx, p, in.TaskListID, "taskListId")
	if err != nil {
		return nil, nil, err
	}
	if len(in.TaskIDs) == 0 {
		return nil, nil, domain.InputError("taskIds", "give at least one task")
	}
	tasks, err := s.tasksForList(ctx, p, l.ProjectID, in.TaskIDs, "taskIds")
	if err != nil {
		return nil, nil, err
	}
	if err := s.tx(ctx, func(tx *app.Tx) error { return s.addToList(ctx, tx, p, l.ID, tasks) }); err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	items, err := s.load(ctx).itemOfTask.LoadMany(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	l, err = s.load(ctx).lists.Get(ctx, l.ID)
	return l, items, err
}

// writableList is visibleList for a caller who changes the list: AGENT
// tokens may not.
func (s *Lists) writableList(ctx context.Context, p *auth.Principal, gid, field string) (*domain.TaskList, error) {
	l, err := s.visibleList(ctx, p, gid, field)
	if err != nil {
		return nil, err
	}
	return l, checkWriter(p)
}

func (s *Lists) visibleList(ctx context.Context, p *auth.Principal, gid, field string) (*domain.TaskList, error) {
	id, err := domain.DecodeID(domain.KindTaskList, gid, field)
	if err != nil {
		return nil, err
	}
	l, err := s.load(ctx).lists.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "task list not found"}
	}
	if err := s.Projects.visibleProjectID(ctx, p, l.ProjectID); err != nil {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "task list not found"}
	}
	return l, nil
}

// TaskList finds a list by global id; nil when absent or invisible.
func (s *Lists) TaskList(ctx context.Context, gid string) (*domain.TaskList, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.visibleList(ctx, p, gid, "id")
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return nil, nil
	}
	return l, err
}

// TaskListByID loads a list for nested fields.
func (s *Lists) TaskListByID(ctx context.Context, id *string) (*domain.TaskList, error) {
	if id == nil {
		return nil, nil
	}
	return s.load(ctx).lists.Load(ctx, *id)
}

// ItemOfTask loads a task's list item.
func (s *Lists) ItemOfTask(ctx context.Context, taskID string) (*domain.TaskListItem, error) {
	return s.load(ctx).itemOfTask.Load(ctx, taskID)
}

// ItemsOfList pages a list's items in list order.
func (s *Lists) ItemsOfList(ctx context.Context, listID string, page domain.PageArgs) (domain.Page[*domain.TaskListItem], error) {
	return app.NestedPage(ctx, s.db, "TaskList.items", page, listID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.TaskListItem], error) {
			return q.Lists.ItemsByLists(ctx, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Lists.CountItemsByLists(ctx, parents)
		})
}

// TasksOfList pages a list's tasks in list order: the item page and its
// tasks in one statement, lean when the operation may. The tasks are primed
// in the request's task loader, as a load by id would have left them.
func (s *Lists) TasksOfList(ctx context.Context, listID string, page domain.PageArgs) (domain.Page[*domain.Task], error) {
	l := s.load(ctx)
	shown := l.taskShown
	pg, err := app.NestedPage(ctx, s.db, "TaskList.tasks", page, listID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.Task], error) {
			return q.Lists.TasksByLists(ctx, shown.Lean, shown.Fields, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Lists.CountItemsByLists(ctx, parents)
		})
	if err != nil {
		return pg, err
	}
	tasks := l.shownTasks()
	for _, t := range pg.Items {
		tasks.Prime(t.ID, t)
	}
	return pg, nil
}

// maxChatID bounds a Telegram chat id.
const maxChatID = 64

// checkChatID checks a Telegram chat id given to a list or a user: nil keeps,
// "" removes (nil), else an id of at most 64 bytes.
func checkChatID(chat *string) (*string, error) {
	if chat == nil {
		return nil, nil
	}
	c := strings.TrimSpace(*chat)
	if c == "" {
		return nil, nil
	}
	if len(c) > maxChatID || strings.ContainsAny(c, " \t\r\n") {
		return nil, domain.InputError("telegramChatId", "telegramChatId must be a Telegram chat id of at most %d bytes", maxChatID)
	}
	return &c, nil
}
