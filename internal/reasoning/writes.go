package reasoning

import (
	"context"
	"fmt"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// StartReasoningExecution starts an execution in a project, optionally
// linked to an agent session, a task and a run of that project, with the
// given profile as version 1 (the default profile without one). Event:
// REASONING_STARTED; with a session, every event of the execution names it
// and so streams on sessionEvents.
func (s *Service) StartReasoningExecution(ctx context.Context, in domain.StartReasoningExecutionInput) (*domain.ReasoningExecution, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	projectID, err := decode(domain.KindProject, in.ProjectID, "projectId", "project")
	if err != nil {
		return nil, err
	}
	taskInput, err := domain.CheckText("taskInput", in.TaskInput, domain.MaxReasoningText, true)
	if err != nil {
		return nil, err
	}
	e := &domain.ReasoningExecution{ID: app.NewID(), ProjectID: projectID, TaskInput: taskInput, TTL: in.TTL,
		CompletenessThreshold: domain.DefaultCompletenessThreshold, CoherenceThreshold: domain.DefaultCoherenceThreshold,
		Status: domain.ReasoningRunning, CreatedBy: app.Actor(p)}
	if in.CompletenessThreshold != nil {
		e.CompletenessThreshold = *in.CompletenessThreshold
	}
	if in.CoherenceThreshold != nil {
		e.CoherenceThreshold = *in.CoherenceThreshold
	}
	if err := domain.CheckUnit("completenessThreshold", &e.CompletenessThreshold); err != nil {
		return nil, err
	}
	if err := domain.CheckUnit("coherenceThreshold", &e.CoherenceThreshold); err != nil {
		return nil, err
	}
	if in.TTL < 1 || in.TTL > domain.MaxReasoningTTL {
		return nil, domain.InputError("ttl", "ttl must be between 1 and %d", domain.MaxReasoningTTL)
	}
	if e.Configuration, err = domain.CheckReasoningJSON("configuration", in.Configuration, "{}"); err != nil {
		return nil, err
	}
	profileIn, isDefault := domain.DefaultTaskProfile(), true
	if in.Profile != nil {
		if profileIn, err = domain.CheckTaskProfile("profile.", *in.Profile); err != nil {
			return nil, err
		}
		isDefault = false
	}
	sessionID, err := domain.DecodeOptionalID(domain.KindAgentSession, in.SessionID, "sessionId")
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return nil, notFound("sessionId", "agent session")
	} else if err != nil {
		return nil, err
	}
	taskID, err := domain.DecodeOptionalID(domain.KindTask, in.TaskID, "taskId")
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return nil, notFound("taskId", "task")
	} else if err != nil {
		return nil, err
	}
	runID, err := domain.DecodeOptionalID(domain.KindExecutionRun, in.RunID, "runId")
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return nil, notFound("runId", "execution run")
	} else if err != nil {
		return nil, err
	}
	e.SessionID, e.TaskID, e.RunID = sessionID, taskID, runID
	now := s.now()
	e.CreatedAt, e.UpdatedAt = now, now
	profile := newProfile(e.ID, 1, profileIn, isDefault, now)
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		projects, err := tx.Projects.ProjectsByIDs(ctx, []string{projectID})
		if err != nil {
			return err
		}
		if len(projects) == 0 || !app.CanSee(p, projects[0]) {
			return notFound("projectId", "project")
		}
		if sessionID != nil {
			// The project is visible, so a session of it is too.
			sessions, err := tx.Sessions.SessionsByIDs(ctx, []string{*sessionID})
			if err != nil {
				return err
			}
			if len(sessions) == 0 || sessions[0].ProjectID != projectID {
				return notFound("sessionId", "agent session") // another project's session is not one of this project's
			}
		}
		if taskID != nil {
			tasks, err := tx.Tasks.TasksByIDs(ctx, []string{*taskID})
			if err != nil {
				return err
			}
			if len(tasks) == 0 || tasks[0].ProjectID != projectID {
				return notFound("taskId", "task") // another project's task is not one of this project's
			}
		}
		if runID != nil {
			runs, err := tx.Runs.RunsByIDs(ctx, []string{*runID})
			if err != nil {
				return err
			}
			if len(runs) == 0 || runs[0].ProjectID != projectID {
				return notFound("runId", "execution run")
			}
		}
		if err := tx.Reasoning.InsertReasoningExecution(ctx, e); err != nil {
			return err
		}
		if err := tx.Reasoning.InsertTaskProfile(ctx, profile); err != nil {
			return err
		}
		tx.Record(domain.NewReasoningStarted(e))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

func newProfile(executionID string, version int, in domain.TaskProfileInput, isDefault bool, at time.Time) *domain.TaskProfile {
	return &domain.TaskProfile{ID: app.NewID(), ExecutionID: executionID, ProfileVersion: version,
		ReasoningDepth: in.ReasoningDepth, InformationSufficiency: in.InformationSufficiency,
		ExpectedToolUsage: in.ExpectedToolUsage, OutputBreadth: in.OutputBreadth,
		ConfidenceRequirement: in.ConfidenceRequirement, RawInference: in.RawInference, IsDefault: isDefault, CreatedAt: at}
}

// running refuses changes to a finished execution (CONFLICT naming field).
func running(e *domain.ReasoningExecution, field string) error {
	if e.Status.Finished() {
		return conflict(field, fmt.Sprintf("the execution finished %s: it changes no more", e.Status))
	}
	return nil
}

// SetTaskProfile adds the next version of an execution's profile; passes
// started after it run with it.
func (s *Service) SetTaskProfile(ctx context.Context, in domain.SetTaskProfileInput) (*domain.TaskProfile, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := decode(domain.KindReasoningExecution, in.ExecutionID, "executionId", "reasoning execution")
	if err != nil {
		return nil, err
	}
	checked, err := domain.CheckTaskProfile("", domain.TaskProfileInput{ReasoningDepth: in.ReasoningDepth,
		InformationSufficiency: in.InformationSufficiency, ExpectedToolUsage: in.ExpectedToolUsage,
		OutputBreadth: in.OutputBreadth, ConfidenceRequirement: in.ConfidenceRequirement, RawInference: in.RawInference})
	if err != nil {
		return nil, err
	}
	var profile *domain.TaskProfile
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		e, err := lockExecution(ctx, tx, p, id, "executionId")
		if err != nil {
			return err
		}
		if err := running(e, "executionId"); err != nil {
			return err
		}
		if last, err := lastPass(ctx, tx, e.ID); err != nil {
			return err
		} else if last != nil && last.Open() {
			return conflict("executionId", fmt.Sprintf("pass %d is open: a new profile is for the next pass, set it once this one completes", last.PassNumber))
		}
		latest, err := tx.Reasoning.LatestTaskProfile(ctx, e.ID)
		if err != nil {
			return err
		}
		now := s.now()
		profile = newProfile(e.ID, latest.ProfileVersion+1, checked, false, now)
		if err := tx.Reasoning.InsertTaskProfile(ctx, profile); err != nil {
			return err
		}
		return tx.Reasoning.TouchReasoningExecution(ctx, e.ID, now)
	})
	if err != nil {
		return nil, err
	}
	return profile, nil
}

// FinishReasoningExecution ends an execution CONVERGED, TTL_EXPIRED or
// FAILED, closing its open pass if it has one. Events: PASS_COMPLETED (for
// that pass), REASONING_FINISHED.
func (s *Service) FinishReasoningExecution(ctx context.Context, in domain.FinishReasoningExecutionInput) (*domain.ReasoningExecution, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := decode(domain.KindReasoningExecution, in.ExecutionID, "executionId", "reasoning execution")
	if err != nil {
		return nil, err
	}
	final, err := domain.CheckReasoningJSON("finalResult", in.FinalResult, "")
	if err != nil {
		return nil, err
	}
	var e *domain.ReasoningExecution
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		var err error
		if e, err = lockExecution(ctx, tx, p, id, "executionId"); err != nil {
			return err
		}
		last, err := lastPass(ctx, tx, e.ID)
		if err != nil {
			return err
		}
		var assessment *domain.ConvergenceAssessment
		if last != nil {
			as, err := tx.Reasoning.AssessmentsByPasses(ctx, []string{last.ID})
			if err != nil {
				return err
			}
			if len(as) > 0 {
				assessment = as[0]
			}
		}
		if err := domain.CheckFinish(e.Status, in.Status, last, assessment); err != nil {
			return err
		}
		now := s.now()
		if last != nil && last.Open() {
			endPass(last, now)
			if err := tx.Reasoning.CompleteExecutionPass(ctx, last); err != nil {
				return err
			}
			tx.Record(domain.NewPassCompleted(e, last))
		}
		e.Status, e.FinalResult, e.CompletedAt, e.UpdatedAt = in.Status, final, &now, now
		if err := tx.Reasoning.FinishReasoningExecution(ctx, e); err != nil {
			return err
		}
		tx.Record(domain.NewReasoningFinished(e))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}
