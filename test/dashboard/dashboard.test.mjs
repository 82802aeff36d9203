// Drives the dashboard in Debian's chromium with playwright-core.
// cmd/taskgraph/e2e_dashboard_test.go runs it against a real server and a
// started run, and talks with it over stdout/stdin lines:
//   script -> test  "READY"    the run page is open: start the agents
//   script -> test  "STOP"     stop the server
//   script -> test  "START"    start it again (same address, same database)
//   script -> test  "DONE"     every check passed
// Environment: BASE_URL, TOKEN, PROJECT_NAME, RUN_ID (the run the agents work),
// CHROMIUM (the browser binary), OUT_DIR (screenshots), README_PNG (optional:
// where to write the README's screenshot of a live run).
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const { BASE_URL, TOKEN, RUN_ID, CHROMIUM, OUT_DIR, README_PNG } = process.env;
const PROJECT_NAME = process.env.PROJECT_NAME || 'Demo';
const say = (line) => process.stdout.write(`${line}\n`);
const step = (name) => say(`step: ${name}`);
mkdirSync(OUT_DIR, { recursive: true });

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
let page;
const consoleLog = []; // printed when the test fails
const shot = async (name, opts = {}) => {
  const path = join(OUT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true, ...opts });
  say(`screenshot: ${path}`);
};
// api calls the GraphQL API as the test's (admin) token, as another client would.
const api = async (q, variables) => {
  const res = await fetch(`${BASE_URL}/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ query: q, variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(`API: ${JSON.stringify(body.errors)}`);
  return body.data;
};
const count = (status) => page.locator(`.task-card[data-status="${status}"]`).count();

try {
  page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    consoleLog.push(`${m.type()}: ${m.text()}`);
    // The browser logs the refused websocket handshakes of the restart itself.
    if (m.type() === 'error' && !/WebSocket connection|ERR_CONNECTION_REFUSED|Failed to load resource/.test(m.text())) {
      errors.push(`console: ${m.text()}`);
    }
  });

  step('sign in: a wrong token is refused, the right one is kept for the tab');
  await page.goto(`${BASE_URL}/ui/`);
  const tokenInput = page.getByLabel('API token');
  await tokenInput.fill('not-a-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText(/Not signed in/).waitFor();
  await tokenInput.fill(TOKEN);
  await tokenInput.press('Enter');
  await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('taskgraph.token')), TOKEN);
  await shot('01-projects');

  step('navigating while a page loads never stacks two pages');
  for (let i = 0; i < 8; i++) {
    // Open the run page (its query and subscription take a while) and move on
    // 0-35 ms later, before it has rendered.
    await page.evaluate(async ([run, delay]) => {
      location.hash = `#/r/${run}`;
      await new Promise((r) => setTimeout(r, delay));
      location.hash = '#/';
    }, [RUN_ID, i * 5]);
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
    await page.waitForTimeout(400); // time for the abandoned run page to finish loading
    assert.equal(await page.locator('main h1').count(), 1, `one page shown after navigation ${i}`);
    assert.equal(await page.locator('main > .view').count(), 1);
  }

  step('a project: its lists and its tasks, searched and sorted');
  await page.getByRole('link', { name: PROJECT_NAME, exact: true }).click();
  await page.getByRole('heading', { name: /^Tasks \(9\)/ }).waitFor();
  await page.getByLabel('Search', { exact: true }).fill('login');
  await page.getByLabel('Sort by').selectOption('DISPLAY_ID');
  await page.getByLabel('Direction').selectOption('ASC');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('heading', { name: /^Tasks \(3\)/ }).waitFor();
  const ids = await page.locator('table.tasks tbody tr td:first-child').allTextContents();
  assert.deepEqual(ids, [...ids].sort(), 'tasks sorted by id ascending');
  await shot('02-project-tasks');
  // Paging through the connection: 9 tasks, 5 a page.
  await page.getByLabel('Search', { exact: true }).fill('');
  await page.getByLabel('Per page').selectOption('5');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText('5 of 9 shown').waitFor();
  const first = await page.locator('table.tasks tbody tr td:first-child').allTextContents();
  await page.getByRole('link', { name: 'Next page →' }).click();
  await page.getByText('4 of 9 shown').waitFor();
  const second = await page.locator('table.tasks tbody tr td:first-child').allTextContents();
  assert.deepEqual([...first, ...second], [...first, ...second].sort(), 'pages continue in order');
  await page.getByRole('link', { name: '← Previous page' }).click();
  await page.getByText('5 of 9 shown').waitFor();
  assert.deepEqual(await page.locator('table.tasks tbody tr td:first-child').allTextContents(), first);

  step('a task: relationships, file impacts, history');
  await page.getByRole('link', { name: 'TU-LOGIN-FEA-005' }).click();
  await page.getByRole('heading', { name: 'File impacts' }).waitFor();
  await page.getByText('api/router.go').waitFor();
  await page.getByRole('heading', { name: 'Waits on' }).waitFor();
  await shot('03-task');

  step('the list: its wave plan with conflicts, and its runs');
  await page.locator('nav.crumbs a').nth(2).click();
  await page.getByRole('heading', { name: 'Wave plan' }).waitFor();
  assert.ok(await page.locator('.plan-wave').count() >= 4, 'waves drawn');
  await page.getByText(/same file as/).first().waitFor(); // the two API tasks both update api/router.go
  await page.locator('.plan-task.has-conflicts').first().focus();
  assert.ok(await page.locator('.plan-task.conflict-hl').count() >= 1, 'focusing a task outlines the tasks it conflicts with');
  await shot('04-wave-plan');

  step('the run page, before any agent works');
  await page.getByRole('link', { name: 'Run #1' }).click();
  await page.locator('.task-card').first().waitFor();
  assert.equal(await page.locator('.task-card').count(), 9);
  assert.equal(await count('PENDING'), 9);
  await page.waitForSelector('#conn[data-state="live"]');
  // A reload would lose this mark: the page must change in place.
  await page.evaluate(() => { window.__sameDocument = true; });
  // Follow the log of the Login API task (wave 3), chosen with the keyboard.
  const card = page.locator('.task-card[data-task="TU-LOGIN-FEA-005"]');
  await card.focus();
  await page.keyboard.press('Enter');
  assert.equal(await card.getAttribute('aria-pressed'), 'true');
  await page.getByRole('heading', { name: 'Questions' }).waitFor();
  await page.getByText('No question is waiting for an answer.').waitFor();
  say('READY');

  step('a question asked over the API appears live; an option button answers it');
  await page.waitForFunction(() => document.querySelectorAll('.task-card:not([data-status="PENDING"])').length >= 1, null, { timeout: 60000 });
  const tree = await api('query($id: ID!) { executionRun(id: $id) { waves { assignments { task { id displayId } } } } }', { id: RUN_ID });
  const about = tree.executionRun.waves.at(-1).assignments[0].task;
  // The questions panel's reads are followed from before the first question:
  // the hold below must start only once every read sent before it has been
  // answered.
  const reads = new Set();
  const isRead = (r) => (r.postData() || '').includes('RunQuestions');
  page.on('request', (r) => { if (isRead(r)) reads.add(r); });
  page.on('requestfinished', (r) => reads.delete(r));
  page.on('requestfailed', (r) => reads.delete(r));
  const asked = await api(`mutation($in: AskQuestionInput!) { askQuestion(input: $in) { question { id status run { id } } } }`, {
    in: {
      taskId: about.id, questionType: 'DECISION', priority: 'HIGH', questionText: 'Which session store should the login use?',
      options: [{ value: 'redis', label: 'Redis', description: 'shared by every replica' }, { value: 'memory', label: 'In memory' }],
    },
  });
  const qid = asked.askQuestion.question.id;
  assert.equal(asked.askQuestion.question.run?.id, RUN_ID, 'the question belongs to the run');
  // A question without options is answered in a text field; this one is skipped.
  const free = await api(`mutation($in: AskQuestionInput!) { askQuestion(input: $in) { question { id } } }`, {
    in: { taskId: about.id, questionType: 'VALIDATION', priority: 'LOW', questionText: 'Anything to add about the login tests?' },
  });
  const fid = free.askQuestion.question.id;
  // One that someone else answers first.
  const other = await api(`mutation($in: AskQuestionInput!) { askQuestion(input: $in) { question { id } } }`, {
    in: {
      taskId: about.id, questionType: 'APPROVAL', questionText: 'Keep the old login form?',
      options: [{ value: 'keep', label: 'Keep' }, { value: 'drop', label: 'Drop' }],
    },
  });
  const cid = other.askQuestion.question.id;
  const qcard = page.locator(`article.question[data-question="${qid}"]`);
  const fcard = page.locator(`article.question[data-question="${fid}"]`);
  await qcard.waitFor({ timeout: 30000 });
  await fcard.getByLabel('Your answer').waitFor({ timeout: 30000 });
  const ccard = page.locator(`article.question[data-question="${cid}"]`);
  await ccard.waitFor({ timeout: 30000 });
  assert.match(await qcard.textContent(), /HIGH priority/);
  assert.match(await qcard.textContent(), /not blocking/);
  assert.match(await qcard.textContent(), new RegExp(about.displayId));
  assert.ok(await page.evaluate(() => window.__sameDocument === true), 'no reload');
  await shot('05-run-question');
  await qcard.getByRole('button', { name: /^Answer Redis/ }).click();
  await qcard.waitFor({ state: 'detached', timeout: 30000 });
  const answered = await api('query($id: ID!) { question(id: $id) { status answer answeredBy { id } } }', { id: qid });
  assert.equal(answered.question.status, 'ANSWERED');
  assert.equal(answered.question.answer, 'redis');
  await fcard.getByRole('button', { name: 'Skip this question' }).click();
  await fcard.waitFor({ state: 'detached', timeout: 30000 });
  assert.equal((await api('query($id: ID!) { question(id: $id) { status } }', { id: fid })).question.status, 'SKIPPED');

  // Someone else answers first while the panel still shows the question (its
  // reads are held back): the page's answer is refused with CONFLICT, said in the panel.
  let holding = true;
  const held = [];
  await page.route('**/graphql', async (route) => {
    if (holding && isRead(route.request())) { held.push(route); return; }
    await route.continue();
  });
  // A read sent before the hold (after the skip) could otherwise reach the
  // server after the answer below and take the card away before the click.
  // A read's request event can reach this process a little after the read
  // left the page: none may be seen for a while (300 ms) before going on.
  const unheld = () => [...reads].filter((r) => !held.some((x) => x.request() === r));
  for (let quiet = 0, deadline = Date.now() + 30000; quiet < 15;) {
    assert.ok(Date.now() < deadline, "the questions panel's reads before the hold were answered");
    quiet = unheld().length > 0 ? 0 : quiet + 1;
    await new Promise((r) => setTimeout(r, 20));
  }
  await api('mutation($in: AnswerQuestionInput!) { answerQuestion(input: $in) { question { id } } }', { in: { id: cid, answer: 'drop' } });
  await page.waitForFunction(() => document.querySelectorAll('.feed li.ev-question_answered').length >= 2, null, { timeout: 30000 });
  await ccard.getByRole('button', { name: 'Answer Keep' }).click();
  const conflict = page.locator('.panel-questions .q-messages [role="alert"]');
  await conflict.waitFor({ timeout: 30000 });
  assert.match(await conflict.textContent(), /Keep the old login form\?.*someone answered it first/);
  holding = false;
  for (const r of held.splice(0)) await r.continue();
  await page.unroute('**/graphql');
  await ccard.waitFor({ state: 'detached', timeout: 30000 });
  await page.getByText('No question is waiting for an answer.').waitFor();
  assert.match(await conflict.textContent(), /someone answered it first/, 'the error stays after the question leaves the list');
  await shot('05-run-question-conflict');
  assert.equal((await api('query($id: ID!) { question(id: $id) { answer } }', { id: cid })).question.answer, 'drop');
  await page.locator('.feed li.ev-question_answered').first().waitFor();

  step('a reasoning execution of the run appears in the Reasoning panel with its score chart');
  const rproj = (await api('query($id: ID!) { executionRun(id: $id) { project { id } } }', { id: RUN_ID })).executionRun.project.id;
  const rex = (await api('mutation($in: StartReasoningExecutionInput!) { startReasoningExecution(input: $in) { execution { id } } }', {
    in: { projectId: rproj, taskId: about.id, runId: RUN_ID, taskInput: 'Choose the login session store', ttl: 3 },
  })).startReasoningExecution.execution.id;
  for (const [phase, ttl, converged, c, k] of [['A', 3, false, 0.6, 0.7], ['B', 2, true, 0.97, 0.93]]) {
    const pass = (await api('mutation($in: StartExecutionPassInput!) { startExecutionPass(input: $in) { pass { id } } }', {
      in: { executionId: rex, phase, ttlRemaining: ttl },
    })).startExecutionPass.pass.id;
    await api('mutation($in: CompleteExecutionPassInput!) { completeExecutionPass(input: $in) { pass { id } } }', { in: { passId: pass } });
    await api('mutation($in: RecordConvergenceAssessmentInput!) { recordConvergenceAssessment(input: $in) { pass { id } } }', {
      in: { passId: pass, converged, completenessScore: c, coherenceScore: k, ...(converged ? {} : { reasonCodes: ['INCOMPLETE'] }) },
    });
  }
  const rcard = page.locator(`.panel-reasoning article.reasoning[data-reasoning="${rex}"]`);
  await page.waitForFunction((id) => document.querySelectorAll(`.panel-reasoning article[data-reasoning="${id}"] .score-table tbody tr`).length === 2,
    rex, { timeout: 30000 });
  assert.equal(await rcard.locator('svg.score-svg circle').count(), 2, 'the chart has a point a pass');
  assert.match(await rcard.locator('figcaption').textContent(), /97% \/ 93%/);

  step('cards change state live, without a reload');
  await page.waitForFunction(() => document.querySelectorAll('.task-card[data-status="COMPLETED"]').length >= 2, null, { timeout: 60000 });
  assert.ok(await page.evaluate(() => window.__sameDocument === true), 'no reload');
  assert.ok(await page.locator('.agents-table tbody tr').count() >= 1, 'agents listed');
  assert.ok(await page.locator('.gantt-svg rect.bar').count() >= 2, 'Gantt bars drawn');
  assert.ok(await page.locator('.feed li').count() >= 5, 'event feed');
  await shot('06-run-live');

  step('the server restarts: the page shows it is reconnecting, then resumes');
  // The server stays down until the page has said so: with the server back
  // at once, the state would last only the page's first retry delay.
  say('STOP');
  await page.waitForSelector('#conn[data-state="reconnecting"]', { timeout: 60000 });
  assert.match(await page.locator('#conn').textContent(), /Reconnecting/);
  await shot('07-run-reconnecting');
  const completedBefore = await count('COMPLETED');
  // A log opened while the server is away is read again once it is back.
  const claimed = page.locator('.task-card:not([data-status="PENDING"])').first();
  const claimedId = await claimed.getAttribute('data-task');
  await claimed.click();
  say('START');
  await page.waitForSelector('#conn[data-state="live"]', { timeout: 60000 });
  assert.match(await page.locator('#conn').textContent(), /resumed/);
  await page.locator('pre.log.live').getByText(`simulated ${claimedId}`).waitFor({ timeout: 60000 });
  // Back to following the Login API task.
  await card.focus();
  await page.keyboard.press('Enter');
  assert.equal(await card.getAttribute('aria-pressed'), 'true');
  await page.waitForFunction((n) => document.querySelectorAll('.task-card[data-status="COMPLETED"]').length > n, completedBefore, { timeout: 60000 });

  step('an agent session of the run appears in the Sessions panel: status, state, todo list, ReAct steps, lessons');
  const worker = (await api('query($id: ID!) { executionRun(id: $id) { agents { id task { id displayId } } } }', { id: RUN_ID }))
    .executionRun.agents[0];
  const sid = (await api('mutation($in: CreateAgentSessionInput!) { createAgentSession(input: $in) { session { id } } }', {
    in: { projectId: rproj, mission: 'Implement the login API', agentId: worker.id, state: { plan: 'v1' } },
  })).createAgentSession.session.id;
  await api('mutation($in: SetAgentSessionStatusInput!) { setAgentSessionStatus(input: $in) { session { id } } }', { in: { id: sid, status: 'IN_PROGRESS' } });
  await api('mutation($in: SaveAgentSessionStateInput!) { saveAgentSessionState(input: $in) { session { id } } }', {
    in: { sessionId: sid, expectedVersion: 1, patch: { routesRead: true } },
  });
  const todo = (await api('mutation($in: CreateTodoListInput!) { createTodoList(input: $in) { todoList { id } } }', {
    in: { sessionId: sid, items: [{ description: 'Read the router' }, { description: 'Add the login route', dependencies: [0] },
      { description: 'Write the login tests', dependencies: [1] }] },
  })).createTodoList.todoList.id;
  for (const status of ['IN_PROGRESS', 'COMPLETED']) {
    await api('mutation($in: UpdateTodoItemInput!) { updateTodoItem(input: $in) { todoList { id } } }', { in: { todoListId: todo, position: 0, status } });
  }
  const reactStep = (input) => api('mutation($in: RecordReActStepInput!) { recordReActStep(input: $in) { step { stepId } } }', { in: { sessionId: sid, ...input } });
  await reactStep({ thought: 'Where are the routes declared?', action: 'grep', actionType: 'TOOL_CALL', actionData: { pattern: 'router' },
    observation: { files: ['api/router.go'] }, success: true });
  await reactStep({ thought: 'Add the POST /login handler', action: 'edit', actionType: 'TOOL_CALL', observation: 'handler added', success: true });
  await api('mutation($in: RecordLessonInput!) { recordLesson(input: $in) { lesson { id } } }', {
    in: { sessionId: sid, context: 'the login API', whatWorked: 'grep for the router first', lesson: 'Routes live in api/router.go',
      toolName: 'grep', confidence: 0.8 },
  });
  const scard = page.locator(`.panel-sessions article.session[data-session="${sid}"]`);
  await page.waitForFunction((id) => {
    const text = document.querySelector(`.panel-sessions article.session[data-session="${id}"]`)?.textContent || '';
    return /2 ReAct steps/.test(text) && /1 lesson/.test(text) && /1 of 3 items done/.test(text);
  }, sid, { timeout: 30000 });
  const scardText = await scard.textContent();
  assert.match(scardText, /IN PROGRESS/, 'the status as a word');
  assert.match(scardText, /state v2/);
  assert.match(await scard.locator('.s-todo').textContent(), /Todo list: ● ACTIVE v3\s+1 of 3 items done/);
  assert.match(scardText, /Latest step 2: Add the POST \/login handler → edit \(✓ yes\)/);
  assert.match(scardText, new RegExp(worker.task.displayId), 'the task it works on');
  assert.equal(await scard.locator('progress').getAttribute('aria-label'), 'Todo list: 1 of 3 items done');
  assert.ok(await page.evaluate(() => window.__sameDocument === true), 'no reload');
  // Opened with the keyboard: the todo list, the steps with their observations, the lesson.
  const show = scard.getByRole('button', { name: 'Show steps and lessons' });
  await show.focus();
  await page.keyboard.press('Enter');
  const stepRows = scard.locator('table.react-steps tbody tr');
  await page.waitForFunction((id) => document.querySelectorAll(`.panel-sessions article[data-session="${id}"] table.react-steps tbody tr`).length === 2,
    sid, { timeout: 30000 });
  assert.equal(await scard.getByRole('button', { name: 'Hide steps and lessons' }).getAttribute('aria-expanded'), 'true');
  assert.match(await stepRows.nth(0).textContent(), /Where are the routes declared\?.*grep.*tool call.*api\/router\.go.*✓ yes/);
  assert.match(await stepRows.nth(1).textContent(), /handler added/);
  assert.match(await scard.locator('.todo-list li').nth(0).textContent(), /COMPLETED.*Read the router/);
  assert.match(await scard.locator('.todo-list li').nth(1).textContent(), /PENDING.*Add the login route.*after 0/);
  assert.match(await scard.locator('ul.lessons').textContent(), /Routes live in api\/router\.go.*confidence 80%.*tool grep/);
  // A step recorded while the detail is open shows up in it.
  await reactStep({ thought: 'Run the login tests', action: 'go test ./api', actionType: 'TOOL_CALL', observation: 'FAIL: TestLogin', success: false, error: 'tests fail' });
  await page.waitForFunction((id) => document.querySelectorAll(`.panel-sessions article[data-session="${id}"] table.react-steps tbody tr`).length === 3,
    sid, { timeout: 30000 });
  assert.match(await stepRows.nth(2).textContent(), /Run the login tests.*FAIL: TestLogin.*✗ no: tests fail/);
  await scard.locator('.s-last-step').getByText(/Latest step 3/).waitFor();
  await scard.scrollIntoViewIfNeeded();
  await shot('07b-run-sessions');

  if (README_PNG) {
    step('the README screenshot: a run with work in progress');
    await page.waitForFunction(() => document.querySelector('.task-card[data-status="IN_PROGRESS"]') &&
      document.querySelectorAll('.task-card[data-status="COMPLETED"]').length >= 4, null, { timeout: 30000 }).catch(() => {});
    // A pending question in the panel (if the run is still going: a question asked after it ends is not the run's).
    const shown = await api(`mutation($in: AskQuestionInput!) { askQuestion(input: $in) { question { id run { id } } } }`, {
      in: {
        taskId: about.id, questionType: 'APPROVAL', priority: 'MEDIUM', questionText: 'May the login tests run against staging?',
        options: [{ value: 'yes', label: 'Yes' }, { value: 'no', label: 'No' }],
      },
    });
    if (shown.askQuestion.question.run) {
      await page.locator(`article.question[data-question="${shown.askQuestion.question.id}"]`).waitFor({ timeout: 10000 }).catch(() => {});
    }
    await page.setViewportSize({ width: 1440, height: 1500 });
    await page.waitForTimeout(100); // one frame for the layout
    await page.screenshot({ path: README_PNG, fullPage: false });
    await page.setViewportSize({ width: 1440, height: 1000 });
    say(`screenshot: ${README_PNG}`);
  }

  step('the run completes; the followed log has the task\'s lines');
  await page.waitForFunction(() => /COMPLETED/.test(document.querySelector('h1 .badge')?.textContent || ''), null, { timeout: 120000 });
  await page.waitForFunction(() => document.querySelectorAll('.task-card[data-status="COMPLETED"]').length === 9, null, { timeout: 60000 });
  await page.locator('pre.log.live').getByText('simulated TU-LOGIN-FEA-005').waitFor();
  assert.ok(await page.evaluate(() => window.__sameDocument === true), 'no reload through the restart');
  const counters = await page.locator('.counters').textContent();
  assert.match(counters, /✓ 9/);

  step('accessible basics');
  for (const el of await page.locator('.task-card').all()) {
    assert.equal(await el.evaluate((e) => e.tagName), 'BUTTON', 'cards are buttons (keyboard reachable)');
    assert.match(await el.locator('.card-status').textContent(), /COMPLETED/, 'status as text, not colour alone');
  }
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select, progress')]
    .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).length);
  assert.equal(unlabelled, 0, 'every control has a label');
  await shot('08-run-completed');

  step('the task page lists the answered question');
  await page.goto(`${BASE_URL}/ui/#/t/${encodeURIComponent(about.id)}`);
  const qrow = page.locator(`table.questions tr[data-question="${qid}"]`);
  await qrow.waitFor();
  assert.match(await qrow.textContent(), /ANSWERED/);
  assert.match(await qrow.textContent(), /Redis by Administrator/);
  await shot('09-task-questions');
  const attempt = page.locator('section[aria-labelledby="exec-h"] article h3').first();
  await attempt.waitFor();
  assert.match(await attempt.textContent(), /Attempt 1 · run #1/, 'the task page lists its execution');
  const rtask = page.locator(`.reasoning-section article.reasoning[data-reasoning="${rex}"]`);
  await rtask.waitFor();
  assert.equal(await rtask.locator('table.passes tbody tr').count(), 2, 'the task page lists the two passes');
  assert.equal(await rtask.locator('.score-table tbody tr').count(), 2, 'and their scores as a table');

  step('the task page of the session lists it with its steps');
  await page.goto(`${BASE_URL}/ui/#/t/${encodeURIComponent(worker.task.id)}`);
  const stask = page.locator(`.sessions-section article.session[data-session="${sid}"]`);
  await stask.waitFor();
  assert.match(await page.locator('#sessions-h').textContent(), /Agent sessions \(1\)/);
  assert.match(await stask.textContent(), /3 ReAct steps · 1 lesson/);
  await stask.getByRole('button', { name: 'Show steps and lessons' }).click();
  await stask.locator('table.react-steps tbody tr').nth(2).waitFor();
  assert.equal(await stask.locator('table.react-steps tbody tr').count(), 3);
  await shot('10-task-sessions');

  step('at phone width (390 px) no page is wider than the screen');
  await page.setViewportSize({ width: 390, height: 844 });
  for (const [name, hash, ready] of [
    ['project', '#/p/login', () => page.locator('table.tasks').waitFor()],
    ['task', `#/t/${encodeURIComponent(about.id)}`, () => page.getByRole('heading', { name: 'History' }).waitFor()],
    ['run', `#/r/${encodeURIComponent(RUN_ID)}`, () => page.locator('.task-card').first().waitFor()],
  ]) {
    await page.goto(`${BASE_URL}/ui/${hash}`);
    await ready();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `the ${name} page is ${width} px wide at 390 px`);
    await shot(`11-phone-${name}`);
  }
  const claimLine = await page.evaluate(() => document.body.textContent);
  assert.doesNotMatch(claimLine, /QnVpbGRBZ2Vud/, 'no opaque agent id shown to people');
  await page.setViewportSize({ width: 1440, height: 1000 });

  assert.deepEqual(errors, [], 'no script errors');
  say('DONE');
} catch (err) {
  if (page) await shot('failure').catch(() => {});
  // The error goes last: a summary of a failed run keeps the output's tail.
  console.error(`browser console (last 40 lines):\n${consoleLog.slice(-40).join('\n')}`);
  console.error(err);
  process.exitCode = 1;
} finally {
  await browser.close();
}
