package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Validation rules end to end: each rule type through the API, the gate on
// every entry into PENDING and on startExecutionRun, WARNING rules shown but
// never blocking, CEL over file impacts, hostile CEL, role rules.

const ruleFields = `id name description ruleType categoryFilter config severity enabled version project { id }`

const createRuleMutation = `mutation($input: CreateValidationRuleInput!) { createValidationRule(input: $input) { rule { ` + ruleFields + ` } } }`

const validationQuery = `query($id: ID!) { task(id: $id) { displayId validation { valid
	violations { rule { id name } severity message field task { id displayId } } } } }`

// createRule creates a rule as token and returns its id.
func (s *testServer) createRule(t testing.TB, token string, input M) string {
	t.Helper()
	return s.query(t, token, createRuleMutation, M{"input": input}).S("createValidationRule.rule.id")
}

// violation is one entry of extensions.violations.
type violation struct{ rule, message, field, task string }

// gateViolations asserts r is the gate's refusal and returns its violations.
func gateViolations(t testing.TB, r gqlResponse) []violation {
	t.Helper()
	require.NotEmpty(t, r.Errors, "expected the gate to refuse, got %s", r.Data)
	require.Equal(t, "BAD_USER_INPUT", r.code(), "%+v", r.Errors)
	raw, ok := r.ext("violations").([]any)
	require.True(t, ok, "extensions.violations: %+v", r.Errors[0].Extensions)
	out := make([]violation, len(raw))
	for i, v := range raw {
		m := v.(map[string]any)
		out[i].rule, _ = m["rule"].(string)
		out[i].message, _ = m["message"].(string)
		out[i].field, _ = m["field"].(string)
		out[i].task, _ = m["task"].(string)
		require.Contains(t, m, "field", "every violation has a field key (null when none)")
	}
	return out
}

func TestValidationRuleTypes(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		_, owner := s.member(t, "owner")
		pid := s.createProject(t, owner, "rules")
		required := s.createRule(t, owner, M{"projectId": pid, "name": "Explain it", "ruleType": "REQUIRED_FIELD",
			"config": M{"field": "acceptanceCriteria"}})
		tests := s.createRule(t, owner, M{"projectId": pid, "name": "Tested", "ruleType": "TEST_REQUIRED",
			"config": M{"levels": []string{"CODEBASE", "API"}, "min": 2}, "categoryFilter": []string{"FEATURE"}})
		pattern := s.createRule(t, owner, M{"projectId": pid, "name": "Scoped title", "ruleType": "PATTERN_MATCH",
			"config": M{"field": "title", "pattern": `^\[[A-Z]+\] `, "message": "start the title with [AREA]"}})
		custom := s.createRule(t, owner, M{"projectId": pid, "name": "Small risky work", "ruleType": "CUSTOM",
			"config":   M{"expression": "task.riskLevel != 'HIGH' || task.effort in ['TRIVIAL', 'SMALL']", "message": "split risky work"},
			"severity": "WARNING"})

		d := s.query(t, owner, `query($p: ID!) { validationRules(projectId: $p) { totalCount nodes { `+ruleFields+` } } }`, M{"p": pid})
		require.Equal(t, 4, d.N("validationRules.totalCount"))
		require.Equal(t, []string{required, tests, pattern, custom}, d.Col("validationRules.nodes", "id"))
		require.Equal(t, "ERROR", d.S("validationRules.nodes.0.severity"), "default severity")
		require.True(t, d.B("validationRules.nodes.0.enabled"), "enabled by default")
		require.Equal(t, pid, d.S("validationRules.nodes.0.project.id"))
		require.Equal(t, "acceptanceCriteria", d.S("validationRules.nodes.0.config.field"))
		require.Equal(t, []string{"FEATURE"}, d.Strs("validationRules.nodes.1.categoryFilter"))
		require.Empty(t, d.Strs("validationRules.nodes.0.categoryFilter"))

		task := s.createTask(t, owner, pid, "Add login", M{"category": "FEATURE", "riskLevel": "HIGH", "effort": "LARGE",
			"acceptanceCriteria": []string{}, "codebaseTests": []string{"unit"}, "uiTests": []string{"e2e"}})
		v := s.query(t, owner, validationQuery, M{"id": task})
		require.False(t, v.B("task.validation.valid"))
		got := v.L("task.validation.violations")
		require.Len(t, got, 4)
		require.Equal(t, []string{required, tests, pattern, custom}, []string{got[0].S("rule.id"), got[1].S("rule.id"), got[2].S("rule.id"), got[3].S("rule.id")})
		require.Equal(t, "acceptanceCriteria is required", got[0].S("message"))
		require.Equal(t, "acceptanceCriteria", got[0].S("field"))
		require.Equal(t, "at least 2 CODEBASE/API test(s) required, the task declares 1", got[1].S("message"))
		require.True(t, got[1].Null("field"))
		require.Equal(t, "start the title with [AREA]", got[2].S("message"))
		require.Equal(t, "title", got[2].S("field"))
		require.Equal(t, "split risky work", got[3].S("message"))
		require.Equal(t, "WARNING", got[3].S("severity"))
		require.Equal(t, task, got[3].S("task.id"))

		// Fixed one by one, only the WARNING is left: valid.
		s.query(t, owner, `mutation($id: ID!) { updateTask(input: {id: $id, title: "[AUTH] Add login",
			acceptanceCriteria: ["a user logs in"], apiTests: ["POST /login"]}) { task { id } } }`, M{"id": task})
		v = s.query(t, owner, validationQuery, M{"id": task})
		require.True(t, v.B("task.validation.valid"))
		require.Equal(t, []string{custom}, []string{v.S("task.validation.violations.0.rule.id")})
		require.Len(t, v.L("task.validation.violations"), 1)

		// The category filter: TEST_REQUIRED applies to FEATUREs only.
		bug := s.createTask(t, owner, pid, "[AUTH] Fix login", M{"category": "BUG", "acceptanceCriteria": []string{"fixed"}})
		v = s.query(t, owner, validationQuery, M{"id": bug})
		require.True(t, v.B("task.validation.valid"))
		require.Empty(t, v.L("task.validation.violations"))

		// Update and delete.
		u := s.query(t, owner, `mutation($id: ID!) { updateValidationRule(input: {id: $id, enabled: false, name: "Off"}) { rule { `+ruleFields+` } } }`, M{"id": pattern})
		require.False(t, u.B("updateValidationRule.rule.enabled"))
		require.Equal(t, "Off", u.S("updateValidationRule.rule.name"))
		require.Equal(t, 2, u.N("updateValidationRule.rule.version"))
		del := s.query(t, owner, `mutation($id: ID!) { deleteValidationRule(input: {id: $id}) { deletedId } }`, M{"id": required})
		require.Equal(t, required, del.S("deleteValidationRule.deletedId"))
		s.requireCode(t, owner, `mutation($id: ID!) { deleteValidationRule(input: {id: $id}) { deletedId } }`, M{"id": required}, "NOT_FOUND")
		n := s.query(t, owner, `query($id: ID!) { node(id: $id) { id ... on ValidationRule { name ruleType } } }`, M{"id": tests})
		require.Equal(t, "TEST_REQUIRED", n.S("node.ruleType"))

		// Configs that do not fit their type: BAD_USER_INPUT, field config.
		for _, c := range []M{
			{"ruleType": "REQUIRED_FIELD", "config": M{"field": "title"}},
			{"ruleType": "REQUIRED_FIELD", "config": M{"field": "effort", "bogus": true}},
			{"ruleType": "TEST_REQUIRED", "config": M{"levels": []string{"E2E"}, "min": 1}},
			{"ruleType": "PATTERN_MATCH", "config": M{"field": "title", "pattern": "(unclosed"}},
			{"ruleType": "CUSTOM", "config": M{"expression": "task.title +"}},
			{"ruleType": "CUSTOM", "config": M{"expression": "task.priorityScore"}},
			{"ruleType": "CUSTOM", "config": M{"expression": strings.Repeat("true && ", 400) + "true"}},
			{"ruleType": "CUSTOM", "config": "not an object"},
		} {
			c["projectId"], c["name"] = pid, "bad"
			r := s.requireCode(t, owner, createRuleMutation, M{"input": c}, "BAD_USER_INPUT")
			require.Equal(t, "config", r.ext("field"), "%v: %+v", c, r.Errors)
		}
		r := s.requireCode(t, owner, `mutation($id: ID!) { updateValidationRule(input: {id: $id, config: {pattern: "("}}) { rule { id } } }`,
			M{"id": tests}, "BAD_USER_INPUT")
		require.Equal(t, "config", r.ext("field"))
	})
}

func TestValidationGate(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		_, owner := s.member(t, "owner")
		pid := s.createProject(t, owner, "gate")
		describe := s.createRule(t, owner, M{"projectId": pid, "name": "Describe it", "ruleType": "REQUIRED_FIELD",
			"config": M{"field": "description"}})
		warn := s.createRule(t, s.AdminToken, M{"name": "Size it", "ruleType": "REQUIRED_FIELD",
			"config": M{"field": "effort"}, "severity": "WARNING"})
		list := s.createList(t, owner, pid, "Sprint")
		status := func(id string) string {
			return s.query(t, owner, `query($id: ID!) { task(id: $id) { status } }`, M{"id": id}).S("task.status")
		}

		// transitionTask
		bare := s.createTask(t, owner, pid, "bare", nil)
		display := s.query(t, owner, `query($id: ID!) { task(id: $id) { displayId } }`, M{"id": bare}).S("task.displayId")
		vs := gateViolations(t, s.do(t, owner, `mutation($id: ID!) { transitionTask(input: {id: $id, to: PENDING}) { task { id } } }`, M{"id": bare}))
		require.Equal(t, []violation{{rule: describe, message: "description is required", field: "description", task: display}}, vs)
		require.Equal(t, "DRAFT", status(bare))

		// addTasksToList
		r := s.do(t, owner, `mutation($l: ID!, $t: ID!) { addTasksToList(input: {taskListId: $l, taskIds: [$t]}) { taskList { id } } }`,
			M{"l": list, "t": bare})
		require.Equal(t, describe, gateViolations(t, r)[0].rule)
		require.Equal(t, "DRAFT", status(bare))
		require.Equal(t, 0, s.query(t, owner, `query($l: ID!) { taskList(id: $l) { totalTasks } }`, M{"l": list}).N("taskList.totalTasks"))

		// createTask with taskListId: nothing created.
		r = s.do(t, owner, `mutation($p: ID!, $l: ID!) { createTask(input: {projectId: $p, title: "listed", taskListId: $l}) { task { id } } }`,
			M{"p": pid, "l": list})
		require.Equal(t, "description is required", gateViolations(t, r)[0].message)
		require.Equal(t, 1, s.query(t, owner, `query($p: ID!) { tasks(projectId: $p) { totalCount } }`, M{"p": pid}).N("tasks.totalCount"))

		// updateTask into a list, and createTaskList with the task.
		r = s.do(t, owner, `mutation($id: ID!, $l: ID!) { updateTask(input: {id: $id, taskListId: $l}) { task { id } } }`, M{"id": bare, "l": list})
		gateViolations(t, r)
		r = s.do(t, owner, `mutation($p: ID!, $t: ID!) { createTaskList(input: {projectId: $p, name: "Other", taskIds: [$t]}) { taskList { id } } }`,
			M{"p": pid, "t": bare})
		gateViolations(t, r)

		// A WARNING never blocks: the task goes in with it shown.
		ok := s.createTask(t, owner, pid, "explained", M{"description": "why", "taskListId": list})
		require.Equal(t, "PENDING", status(ok))
		v := s.query(t, owner, validationQuery, M{"id": ok})
		require.True(t, v.B("task.validation.valid"))
		require.Equal(t, warn, v.S("task.validation.violations.0.rule.id"))
		require.Equal(t, "WARNING", v.S("task.validation.violations.0.severity"))

		// startExecutionRun: tasks that entered the list before a rule existed
		// hold the run back, every one of them listed; nothing is created.
		other := s.createTask(t, owner, pid, "also explained", M{"description": "why", "taskListId": list})
		tested := s.createRule(t, owner, M{"projectId": pid, "name": "Tested", "ruleType": "TEST_REQUIRED",
			"config": M{"levels": []string{"CODEBASE"}, "min": 1}})
		plan := s.query(t, owner, `query($l: ID!) { wavePlan(taskListId: $l) { violations { rule { id } severity message task { id displayId } } } }`, M{"l": list})
		pv := plan.L("wavePlan.violations")
		require.Len(t, pv, 4, "two tasks, each with the WARNING and the ERROR")
		var errorTasks []string
		for _, x := range pv {
			if x.S("severity") == "ERROR" {
				require.Equal(t, tested, x.S("rule.id"))
				errorTasks = append(errorTasks, x.S("task.displayId"))
			}
		}
		require.Len(t, errorTasks, 2)
		r = s.do(t, owner, `mutation($l: ID!) { startExecutionRun(input: {taskListId: $l}) { run { id } } }`, M{"l": list})
		vs = gateViolations(t, r)
		require.Len(t, vs, 2)
		var tasks []string
		for _, x := range r.ext("tasks").([]any) {
			tasks = append(tasks, x.(string))
		}
		require.ElementsMatch(t, errorTasks, tasks)
		for _, d := range errorTasks {
			require.Contains(t, r.Errors[0].Message, d)
		}
		require.Empty(t, s.query(t, owner, `query($l: ID!) { taskList(id: $l) { runs { id } } }`, M{"l": list}).L("taskList.runs"))
		require.Equal(t, "PENDING", status(ok))

		// Disabled, the ERROR rule lets the run start; the WARNING does not stop it.
		s.query(t, owner, `mutation($id: ID!) { updateValidationRule(input: {id: $id, enabled: false}) { rule { id } } }`, M{"id": tested})
		run := s.query(t, owner, `mutation($l: ID!) { startExecutionRun(input: {taskListId: $l}) { run { id runNumber } } }`, M{"l": list})
		require.Equal(t, 1, run.N("startExecutionRun.run.runNumber"))
		_ = other
	})
}

func TestValidationCEL(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		_, owner := s.member(t, "owner")
		pid := s.createProject(t, owner, "cel")
		rule := s.createRule(t, owner, M{"projectId": pid, "name": "Keep migrations", "ruleType": "CUSTOM",
			"config": M{"expression": "!task.fileImpacts.exists(f, f.filePath.startsWith('db/migrations/') && f.operation == 'DELETE')",
				"message": "never delete a migration"}})
		list := s.createList(t, owner, pid, "L")
		impacts := []M{{"filePath": "internal/a.go", "operation": "UPDATE"}, {"filePath": "db/migrations/0001_init.sql", "operation": "DELETE"}}
		r := s.do(t, owner, `mutation($input: CreateTaskInput!) { createTask(input: $input) { task { id } } }`,
			M{"input": M{"projectId": pid, "title": "clean up", "taskListId": list, "fileImpacts": impacts}})
		vs := gateViolations(t, r)
		require.Equal(t, violation{rule: rule, message: "never delete a migration"}, violation{rule: vs[0].rule, message: vs[0].message})
		require.Empty(t, vs[0].field)

		impacts[1]["operation"] = "UPDATE"
		id := s.createTask(t, owner, pid, "clean up", M{"taskListId": list, "fileImpacts": impacts})
		require.True(t, s.query(t, owner, validationQuery, M{"id": id}).B("task.validation.valid"))

		// Hostile: nested comprehensions over literals are refused when written.
		l := "[0,1,2,3,4,5,6,7,8,9]"
		hostile := fmt.Sprintf("%s.all(a, %s.all(b, %s.all(c, %s.all(d, %s.all(e, %s.all(f, %s.all(g, a+b+c+d+e+f+g >= 0)))))))", l, l, l, l, l, l, l)
		resp := s.requireCode(t, owner, createRuleMutation, M{"input": M{"projectId": pid, "name": "hostile", "ruleType": "CUSTOM",
			"config": M{"expression": hostile}}}, "BAD_USER_INPUT")
		require.Equal(t, "config", resp.ext("field"))
		require.Contains(t, resp.Errors[0].Message, "cost limit")

		// Hostile on big tasks only: accepted, then stopped by the cost limit
		// when evaluated, quickly, and counted as a violation.
		s.createRule(t, owner, M{"projectId": pid, "name": "cubic", "ruleType": "CUSTOM", "severity": "WARNING",
			"config": M{"expression": "task.affectedFiles.all(a, task.affectedFiles.all(b, task.affectedFiles.all(c, a + b + c != 'x')))"}})
		files := make([]string, 200)
		for i := range files {
			files[i] = fmt.Sprintf("internal/pkg%03d/file.go", i)
		}
		big := s.createTask(t, owner, pid, "big", M{"affectedFiles": files})
		start := time.Now()
		v := s.query(t, owner, validationQuery, M{"id": big})
		t.Logf("validation of a task with a cost-limited rule took %v", time.Since(start))
		got := v.L("task.validation.violations")
		require.Len(t, got, 1)
		// The cost limit stops it; under the race detector the one-second
		// time limit can come first.
		require.Regexp(t, "(cost|time) limit exceeded", got[0].S("message"))
		require.Equal(t, "WARNING", got[0].S("severity"))
	})
}

func TestValidationRoles(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		_, owner := s.member(t, "owner")
		_, stranger := s.member(t, "stranger")
		pid := s.createProject(t, owner, "roles")
		_, agent := s.userWithToken(t, "bot", "AGENT", pid)
		input := func(projectID string) M {
			in := M{"name": "r", "ruleType": "REQUIRED_FIELD", "config": M{"field": "effort"}}
			if projectID != "" {
				in["projectId"] = projectID
			}
			return M{"input": in}
		}
		s.requireCode(t, owner, createRuleMutation, input(""), "FORBIDDEN")
		s.requireCode(t, agent, createRuleMutation, input(""), "FORBIDDEN")
		s.requireCode(t, agent, createRuleMutation, input(pid), "FORBIDDEN")
		s.requireCode(t, stranger, createRuleMutation, input(pid), "NOT_FOUND")
		global := s.createRule(t, s.AdminToken, input("")["input"].(M))
		own := s.createRule(t, owner, input(pid)["input"].(M))

		update := `mutation($id: ID!) { updateValidationRule(input: {id: $id, severity: WARNING}) { rule { id severity } } }`
		remove := `mutation($id: ID!) { deleteValidationRule(input: {id: $id}) { deletedId } }`
		s.requireCode(t, owner, update, M{"id": global}, "FORBIDDEN")
		s.requireCode(t, owner, remove, M{"id": global}, "FORBIDDEN")
		s.requireCode(t, agent, update, M{"id": own}, "FORBIDDEN")
		s.requireCode(t, agent, remove, M{"id": own}, "FORBIDDEN")
		s.requireCode(t, stranger, update, M{"id": own}, "NOT_FOUND")
		require.Equal(t, "WARNING", s.query(t, owner, update, M{"id": own}).S("updateValidationRule.rule.severity"))
		require.Equal(t, "WARNING", s.query(t, s.AdminToken, update, M{"id": global}).S("updateValidationRule.rule.severity"))

		list := `query($p: ID) { validationRules(projectId: $p) { totalCount nodes { id project { id } } } }`
		for _, tok := range []string{owner, agent, s.AdminToken} {
			require.Equal(t, []string{global, own}, s.query(t, tok, list, M{"p": pid}).Col("validationRules.nodes", "id"))
		}
		require.Equal(t, []string{global}, s.query(t, stranger, list, M{}).Col("validationRules.nodes", "id"))
		require.True(t, s.query(t, stranger, list, M{}).Null("validationRules.nodes.0.project"))
		s.requireCode(t, stranger, list, M{"p": pid}, "NOT_FOUND")
		node := `query($id: ID!) { node(id: $id) { id } }`
		require.True(t, s.query(t, stranger, node, M{"id": own}).Null("node"))
		require.Equal(t, own, s.query(t, agent, node, M{"id": own}).S("node.id"))
		require.Equal(t, global, s.query(t, stranger, node, M{"id": global}).S("node.id"))
	})
}

// Task.validation under a list of tasks costs the same statements for 1 task
// and for 30.
func TestValidationStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		s.createRule(t, s.AdminToken, M{"name": "impacts", "ruleType": "REQUIRED_FIELD", "config": M{"field": "fileImpacts"}})
		s.createRule(t, s.AdminToken, M{"name": "cel", "ruleType": "CUSTOM", "severity": "WARNING",
			"config": M{"expression": "task.fileImpacts.all(f, f.operation != 'DELETE')"}})
		cost := func(slug string, n int) int64 {
			pid := s.createProject(t, s.AdminToken, slug)
			s.createRule(t, s.AdminToken, M{"projectId": pid, "name": "desc", "ruleType": "REQUIRED_FIELD", "config": M{"field": "description"}})
			for i := range n {
				s.createTask(t, s.AdminToken, pid, fmt.Sprintf("t%d", i), M{"fileImpacts": []M{{"filePath": "a.go", "operation": "DELETE"}}})
			}
			before := s.DB.Statements()
			d := s.query(t, s.AdminToken, `query($p: ID!) { tasks(projectId: $p, first: 100) { nodes { id validation { valid
				violations { rule { id } message task { id } } } } } }`, M{"p": pid})
			spent := s.DB.Statements() - before
			for _, node := range d.L("tasks.nodes") {
				require.False(t, node.B("validation.valid"))
				require.Len(t, node.L("validation.violations"), 2)
			}
			return spent
		}
		one, many := cost("one", 1), cost("many", 30)
		require.Equal(t, one, many, "statements for 1 task vs 30")
	})
}
