package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Rules' regular expressions cannot take the server's CPU: a pattern whose
// program blows up is refused when the rule is written (PATTERN_MATCH and
// CUSTOM `matches`), and the heaviest accepted one sees a bounded part of a
// long text. Before the bound, eight CUSTOM rules with `(?:a|aa){1,1000}c`
// made one transitionTask on a 100 KB description cost 18 s of CPU.
//
// Not parallel: the figure is this process's CPU over one request, so
// nothing else may run meanwhile.
func TestRuleRegexesBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, s *testServer) {
		_, owner := s.member(t, "owner")
		pid := s.createProject(t, owner, "regex")
		blowUp := `(?:a|aa){1,1000}c`
		for _, in := range []M{
			{"ruleType": "CUSTOM", "config": M{"expression": "task.description.matches('" + blowUp + "')"}},
			{"ruleType": "PATTERN_MATCH", "config": M{"field": "description", "pattern": blowUp}},
		} {
			in["projectId"], in["name"] = pid, "blow-up"
			resp := s.requireCode(t, owner, createRuleMutation, M{"input": in}, "BAD_USER_INPUT")
			require.Equal(t, "config", resp.ext("field"))
			require.Contains(t, resp.Errors[0].Message, "too complex")
		}

		// The heaviest patterns the bound lets through, eight of each kind
		// (two under the race detector, which slows regexp 40-fold).
		heavy := `(?:a|aa){1,30}c`
		n := 8
		if raceEnabled {
			n = 2
		}
		for range n {
			s.createRule(t, owner, M{"projectId": pid, "name": "custom", "ruleType": "CUSTOM",
				"config": M{"expression": "task.description.matches('" + heavy + "')"}})
			s.createRule(t, owner, M{"projectId": pid, "name": "pattern", "ruleType": "PATTERN_MATCH",
				"config": M{"field": "description", "pattern": heavy}})
		}
		id := s.createTask(t, owner, pid, "long", M{"description": strings.Repeat("a", 100_000)})
		cpu0 := processCPU(t)
		vs := gateViolations(t, s.do(t, owner, `mutation($id: ID!) { transitionTask(input: {id: $id, to: PENDING}) { task { id } } }`, M{"id": id}))
		cpu := processCPU(t) - cpu0
		require.Len(t, vs, 2*n)
		t.Logf("transitionTask through %d heavy regex rules on a 100 KB description: %v of CPU (race detector: %v)", 2*n, cpu, raceEnabled)
		limit := 2e9 // ns: 16 matches of at most ~20 ms each, and the request around them
		if raceEnabled {
			limit = 10e9 // 4 matches of at most ~0.5 s each under the race detector
		}
		require.Less(t, float64(cpu), limit, "rule evaluation is bounded")
	})
}
