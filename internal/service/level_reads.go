package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// Level reads: one field of every object of a nested list, read at once
// (loader.Read) through the loaders its one-object read uses (graph's level
// reads), so that each object's resolver later finds its value cached
// instead of waiting on a batch. Values come in the order of the keys.

// ReadRelationships is Relationships of each of taskIDs.
func (s *Tasks) ReadRelationships(ctx context.Context, taskIDs []string, dir domain.RelationshipDirection, types []domain.RelationshipType) ([][]*domain.TaskRelationship, error) {
	all, err := s.load(ctx).relsIn(dir).Read(ctx, taskIDs)
	if err != nil {
		return nil, err
	}
	for i, rels := range all {
		all[i] = ofTypes(rels, types)
	}
	return all, nil
}

// ReadFileImpacts is FileImpacts of each of taskIDs, nil where a task has
// none.
func (s *Tasks) ReadFileImpacts(ctx context.Context, taskIDs []string) ([][]*domain.TaskFileImpact, error) {
	return s.load(ctx).shownImpacts().Read(ctx, taskIDs)
}

// ReadTasks is TaskByID of each of ids: nil where a task is not shown.
func (s *Tasks) ReadTasks(ctx context.Context, ids []string) ([]*domain.Task, error) {
	return s.load(ctx).shownTasks().Read(ctx, ids)
}

// ReadLinked is Linked of each of taskIDs: their relationships for all at
// once, then the tasks at their other ends for all at once.
func (s *Tasks) ReadLinked(ctx context.Context, taskIDs []string, links Links) ([][]*domain.Task, error) {
	rels, err := s.load(ctx).relsOfTask.Read(ctx, taskIDs)
	if err != nil {
		return nil, err
	}
	ids := make([][]string, len(taskIDs))
	var all []string
	for i, id := range taskIDs {
		ids[i] = linkedIDs(id, rels[i], links)
		all = append(all, ids[i]...)
	}
	tasks, err := s.ReadTasks(ctx, all)
	if err != nil {
		return nil, err
	}
	out := make([][]*domain.Task, len(taskIDs))
	for i := range ids {
		out[i], tasks = shown(tasks[:len(ids[i])]), tasks[len(ids[i]):]
	}
	return out, nil
}
