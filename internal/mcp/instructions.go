package mcp

// Instructions are the server's instructions in the initialize result: what
// an agent needs, and nothing else, to take tasks to done on its own.
const Instructions = `Taskgraph coordinates AI agents working through a graph of tasks: it plans task lists into waves that may run in parallel (tasks touching the same files are kept apart, dependencies first), hands each task to exactly one agent under a lease, and keeps people in the loop.

To work on a run's tasks, repeat this loop until claim_task says RUN_FINISHED:

1. claim_task with the run (or the taskList). It returns agentId and the task in full: description, acceptanceCriteria, declared tests (codebaseTests, apiTests, uiTests), fileImpacts, dependencies and relevant lessons. Keep agentId: every call about the task needs it. If it returns waitReason instead, follow its advice (wait and claim again; RUN_FINISHED: stop).
2. While you work, call heartbeat with agentId at least every 10 seconds (progressPercent, currentStep). It answers a directive: CONTINUE (go on), PAUSE (stop changing things, keep heartbeating until CONTINUE), CANCEL (stop now, do not complete or fail).
3. append_log with what you do and see (commands, output, decisions): people watch it live.
4. Run each declared test and record_test_result for it (level CODEBASE/API/UI, testIndex from 0 in that list, status PASSED/FAILED/...).
5. complete_task with filesModified and gitCommits once every declared test has a PASSED result (a declared test without one makes the task FAILED instead), or fail_task with the error (retryable true if another attempt may succeed). Then go back to 1.

If a decision is not yours to make (ambiguous requirement, risky or destructive change), call ask_human with agentId, the question, options and a defaultAnswer: it waits for the answer (keeping your lease) and returns it, or the expiry.

Errors come back as tool results with isError true and text starting with the code:
- LEASE_LOST: you no longer hold the task (lease expired, run paused or cancelled). Stop working on it at once, do not complete or fail it, and claim again.
- VERSION_CONFLICT: someone changed it since you read it; read again, merge, retry with the new version.
- CONFLICT: the state does not allow it (e.g. the list already has an active run); read the state and act on it.
- FORBIDDEN: your token's role may not do this (AGENT tokens only work tasks); do not retry.
- NOT_FOUND, BAD_USER_INPUT (field names the argument), LIMIT_EXCEEDED: fix the call.

Before unfamiliar steps, search_lessons; after learning something the hard way, record_lesson. Keep notes that must survive your context with save_session_state / get_session_state (compare-and-swap on version).
Planning tools (create_task, update_task, link_tasks, plan_waves, start_run) need an ADMIN or MEMBER token; list_projects, list_tasks, get_task and get_run read. Task display ids (TU-...) are accepted wherever a task id is.`
