package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgraph/taskgraph/internal/domain"
)

type searchLessonsIn struct {
	Query    string `json:"query,omitempty" jsonschema:"What you are about to do, in words (full-text, ranked by relevance x confidence); empty: the most confident lessons."`
	ToolName string `json:"toolName,omitempty" jsonschema:"Only lessons about this tool or command."`
	Project  string `json:"project,omitempty" jsonschema:"Only this project's lessons (slug or id); empty: the global ones and every project you can see."`
	First    int    `json:"first,omitempty" jsonschema:"How many (1-100, default 10)."`
}

type recordLessonIn struct {
	Lesson     string  `json:"lesson" jsonschema:"The lesson, as advice to the next agent."`
	Context    string  `json:"context" jsonschema:"The situation it applies to."`
	WhatWorked string  `json:"whatWorked" jsonschema:"What worked."`
	WhatFailed string  `json:"whatFailed,omitempty" jsonschema:"What did not work, if anything."`
	ToolName   string  `json:"toolName,omitempty" jsonschema:"The tool or command it is about, if any."`
	Confidence float64 `json:"confidence" jsonschema:"How sure you are, 0 to 1."`
	Project    string  `json:"project,omitempty" jsonschema:"The project it belongs to (slug or id); empty: a global lesson (ADMIN only)."`
	SessionID  string  `json:"sessionId,omitempty" jsonschema:"The session it was learned in, if any."`
}

type getSessionStateIn struct {
	SessionID string `json:"sessionId,omitempty" jsonschema:"The session's id."`
	AgentID   string `json:"agentId,omitempty" jsonschema:"Or your agentId: the newest session of your claimed task's agent."`
}

type saveSessionStateIn struct {
	SessionID       string         `json:"sessionId,omitempty" jsonschema:"The session's id."`
	AgentID         string         `json:"agentId,omitempty" jsonschema:"Or your agentId: its newest session, created on the first save (expectedVersion 0)."`
	ExpectedVersion int            `json:"expectedVersion" jsonschema:"The version you read (get_session_state's version; 0 to create the agent's first session). VERSION_CONFLICT when someone saved since: read again, merge, retry."`
	State           map[string]any `json:"state,omitempty" jsonschema:"The whole new state, a JSON object (exactly one of state and patch; at most 1 MiB)."`
	Patch           map[string]any `json:"patch,omitempty" jsonschema:"An RFC 7396 JSON merge patch of the latest state: null removes a key."`
	Mission         string         `json:"mission,omitempty" jsonschema:"The mission of a session created by this save (default: the task's title)."`
}

const sessionFields = `id mission status stateVersion state`

type sessionOut struct {
	ID           string `json:"sessionId"`
	Mission      string `json:"mission"`
	Status       string `json:"status"`
	StateVersion int    `json:"version"`
	State        any    `json:"state"`
}

// agentSessions reads a build agent's sessions (oldest first) and what a new
// one needs.
func (c *call) agentSessions(ctx context.Context, agentID string) (sessions []sessionOut, projectID, title string, err error) {
	var out struct {
		Node *struct {
			Run *struct {
				Project struct{ ID string }
			}
			Task     *struct{ Title string }
			Sessions []struct {
				ID, Mission, Status string
				StateVersion        int
				State               any
			}
		}
	}
	err = c.do(ctx, `query($a: ID!) { node(id: $a) { ... on BuildAgent { run { project { id } } task { title } sessions { `+sessionFields+` } } } }`,
		vars{"a": agentID}, &out)
	if err != nil {
		return nil, "", "", err
	}
	if out.Node == nil || out.Node.Run == nil || out.Node.Task == nil {
		return nil, "", "", notFound("agentId", "agent "+agentID)
	}
	for _, s := range out.Node.Sessions {
		sessions = append(sessions, sessionOut{ID: s.ID, Mission: s.Mission, Status: s.Status, StateVersion: s.StateVersion, State: s.State})
	}
	return sessions, out.Node.Run.Project.ID, out.Node.Task.Title, nil
}

func (t *tools) addMemoryTools(s *sdk.Server) {
	add(s, t, &sdk.Tool{Name: "search_lessons", Title: "Search lessons", Annotations: readOnly(),
		Description: `Searches the lessons agents recorded (what worked, what failed, in which context), ranked by relevance x confidence. Call it before an unfamiliar step: a build, a migration, a tool you have not used here.
Returns {lessons: [{lesson, context, whatWorked, whatFailed, toolName, confidence}]}.`},
		func(ctx context.Context, c *call, in searchLessonsIn) (any, error) {
			project, err := c.projectID(ctx, "project", in.Project)
			if err != nil {
				return nil, err
			}
			var out struct {
				Lessons struct{ Nodes []map[string]any }
			}
			err = c.do(ctx, `query($p: ID, $q: String, $tool: String, $first: Int) {
  lessons(projectId: $p, query: $q, toolName: $tool, first: $first) { nodes { id lesson context whatWorked whatFailed toolName confidence project { slug } createdAt } }
}`, vars{"first": first(in.First, 10)}.str("p", project).str("q", in.Query).str("tool", in.ToolName), &out)
			if err != nil {
				return nil, err
			}
			if out.Lessons.Nodes == nil {
				out.Lessons.Nodes = []map[string]any{}
			}
			return map[string]any{"lessons": out.Lessons.Nodes}, nil
		},
		maxLen(maxQuery, "query", "toolName"), maxLen(maxID, "project"), between("first", 0, maxPage))

	add(s, t, &sdk.Tool{Name: "record_lesson", Title: "Record a lesson", Annotations: writes(false),
		Description: `Records a lesson for the agents after you: something you learned the hard way (a command that needs a flag, a test that needs a service, a pitfall of this codebase). Record it when you fixed a failure or found a non-obvious way through.
Returns {lesson: {id}}.`},
		func(ctx context.Context, c *call, in recordLessonIn) (any, error) {
			project, err := c.projectID(ctx, "project", in.Project)
			if err != nil {
				return nil, err
			}
			input := vars{"lesson": in.Lesson, "context": in.Context, "whatWorked": in.WhatWorked, "confidence": in.Confidence}.
				str("whatFailed", in.WhatFailed).str("toolName", in.ToolName).str("projectId", project).str("sessionId", in.SessionID)
			var out struct {
				RecordLesson struct{ Lesson map[string]any }
			}
			if err := c.do(ctx, `mutation($in: RecordLessonInput!) { recordLesson(input: $in) { lesson { id lesson confidence createdAt } } }`,
				vars{"in": map[string]any(input)}, &out); err != nil {
				return nil, err
			}
			return map[string]any{"lesson": out.RecordLesson.Lesson}, nil
		},
		maxLen(domain.MaxLessonTextLen, "lesson", "context", "whatWorked", "whatFailed"), maxLen(maxQuery, "toolName"),
		between("confidence", 0, 1), maxLen(maxID, "project", "sessionId"))

	add(s, t, &sdk.Tool{Name: "get_session_state", Title: "Get session state", Annotations: readOnly(),
		Description: `Reads an agent session's latest state: the notes you keep across context windows and restarts (your plan, what is done, what you learned). Give sessionId, or agentId for your claimed task's session.
Returns {session: {sessionId, version, state, mission, status}} — session null when the agent has none yet (save_session_state with expectedVersion 0 creates it). Keep version for save_session_state.`},
		func(ctx context.Context, c *call, in getSessionStateIn) (any, error) {
			switch {
			case (in.SessionID == "") == (in.AgentID == ""):
				return nil, badInput("sessionId", "give exactly one of sessionId and agentId")
			case in.AgentID != "":
				sessions, _, _, err := c.agentSessions(ctx, in.AgentID)
				if err != nil {
					return nil, err
				}
				if len(sessions) == 0 {
					return map[string]any{"session": nil}, nil
				}
				return map[string]any{"session": sessions[len(sessions)-1]}, nil
			}
			var out struct {
				AgentSession *struct {
					ID, Mission, Status string
					StateVersion        int
					State               any
				}
			}
			if err := c.do(ctx, `query($s: ID!) { agentSession(id: $s) { `+sessionFields+` } }`, vars{"s": in.SessionID}, &out); err != nil {
				return nil, err
			}
			if out.AgentSession == nil {
				return nil, notFound("sessionId", "session "+in.SessionID)
			}
			a := out.AgentSession
			return map[string]any{"session": sessionOut{ID: a.ID, Mission: a.Mission, Status: a.Status, StateVersion: a.StateVersion, State: a.State}}, nil
		},
		maxLen(maxID, "sessionId", "agentId"))

	add(s, t, &sdk.Tool{Name: "save_session_state", Title: "Save session state", Annotations: writes(false),
		Description: `Saves an agent session's state as a compare-and-swap on its version: the whole new state, or a JSON merge patch of the latest. Give sessionId, or agentId (its first save, with expectedVersion 0, creates the agent's session).
Returns {session: {sessionId, version}}. VERSION_CONFLICT (currentVersion) means someone saved since you read: get_session_state, merge, retry with the new version.`},
		func(ctx context.Context, c *call, in saveSessionStateIn) (any, error) {
			if (in.SessionID == "") == (in.AgentID == "") {
				return nil, badInput("sessionId", "give exactly one of sessionId and agentId")
			}
			if (in.State == nil) == (in.Patch == nil) {
				return nil, badInput("state", "give exactly one of state and patch")
			}
			session := in.SessionID
			if in.AgentID != "" {
				sessions, projectID, title, err := c.agentSessions(ctx, in.AgentID)
				if err != nil {
					return nil, err
				}
				if len(sessions) == 0 {
					if in.ExpectedVersion != 0 || in.State == nil {
						return nil, &toolError{Code: "VERSION_CONFLICT", Message: "the agent has no session yet", Field: "expectedVersion", CurrentVersion: 0,
							Hint: "Create it with expectedVersion 0 and the whole state."}
					}
					mission := in.Mission
					if mission == "" {
						mission = title
					}
					var out struct {
						CreateAgentSession struct {
							Session struct {
								ID           string
								StateVersion int
							}
						}
					}
					err := c.do(ctx, `mutation($in: CreateAgentSessionInput!) { createAgentSession(input: $in) { session { id stateVersion } } }`,
						vars{"in": map[string]any{"projectId": projectID, "agentId": in.AgentID, "mission": mission, "state": in.State}}, &out)
					if err != nil {
						return nil, err
					}
					return map[string]any{"session": map[string]any{"sessionId": out.CreateAgentSession.Session.ID, "version": out.CreateAgentSession.Session.StateVersion}}, nil
				}
				session = sessions[len(sessions)-1].ID
			}
			input := vars{"sessionId": session, "expectedVersion": in.ExpectedVersion}
			if in.State != nil {
				input["state"] = in.State
			} else {
				input["patch"] = in.Patch
			}
			var out struct {
				SaveAgentSessionState struct {
					Session struct {
						ID           string
						StateVersion int
					}
				}
			}
			if err := c.do(ctx, `mutation($in: SaveAgentSessionStateInput!) { saveAgentSessionState(input: $in) { session { id stateVersion } } }`,
				vars{"in": map[string]any(input)}, &out); err != nil {
				return nil, err
			}
			s := out.SaveAgentSessionState.Session
			return map[string]any{"session": map[string]any{"sessionId": s.ID, "version": s.StateVersion}}, nil
		},
		maxLen(maxID, "sessionId", "agentId"), between("expectedVersion", 0, 1<<31-1), maxLen(domain.MaxMissionLen, "mission"))
}
