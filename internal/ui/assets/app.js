// The dashboard: a hash router over a few pages, each built from one GraphQL
// query (queries/*.graphql). Pages:
//   #/                 projects
//   #/p/<slug>?…       a project: its task lists, and its tasks (filter, sort, search, paging)
//   #/t/<id>           a task: relationships, file impacts, history, questions, reasoning, agent sessions, executions and logs
//   #/l/<id>           a task list: its wave plan with conflicts, and its runs
//   #/r/<id>           a run, live
import { query, token, setToken, GraphQLError } from './gql.js';
import { h, put, clear, badge, link, fmtTime, fmtDuration, errorBox, field, select } from './dom.js';
import { taskListPage } from './plan.js';
import { runPage } from './run.js';
import { questionsSection } from './questions.js';
import { reasoningSection } from './reasoning.js';
import { sessionsSection } from './sessions.js';
import { ssoConfig, providerName, startSignIn, finishSignIn } from './sso.js';

const main = document.getElementById('main');
const userBox = document.getElementById('user');
const connBox = document.getElementById('conn');

// The page being shown may hold resources (a subscription, timers): the
// router disposes of them before showing the next.
let dispose = null;
let viewer = null;
let signInMessage = ''; // why the last sign-in did not work, shown once

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = raw.split('?');
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(qs || '') };
}

export function go(href) { location.hash = href.replace(/^#/, ''); }

// Each route renders into a view of its own. A page still loading when the
// route moves on finishes into its detached view, never into the page shown:
// two views can never stack. What it registers for disposal is disposed of
// at once.
let routeGen = 0;

async function route() {
  const gen = ++routeGen;
  const current = () => gen === routeGen;
  if (dispose) { try { dispose(); } catch { /* page already gone */ } dispose = null; }
  connBox.hidden = true;
  const view = h('div', { class: 'view' });
  put(clear(main), view);
  if (!token()) { signIn(view, signInMessage); signInMessage = ''; return; }
  if (!viewer) {
    try {
      const v = (await query('viewer')).viewer;
      if (!current()) return;
      viewer = v;
    } catch (err) {
      if (!current()) return;
      if (err instanceof GraphQLError && (err.status === 401 || err.code === 'UNAUTHENTICATED')) {
        setToken(''); signIn(view, 'That token was not accepted.'); return;
      }
      put(view, errorBox(err)); return;
    }
    renderUser();
  }
  const { parts, params } = parseHash();
  const ctx = {
    main: view, params, go, connBox,
    onDispose(f) {
      if (!current()) { try { f(); } catch { /* already gone */ } return; }
      dispose = f;
    },
    setTitle(t) { if (current()) document.title = `${t} — Taskgraph`; },
  };
  const [kind, id] = parts;
  try {
    if (!kind) await projectsPage(ctx);
    else if (kind === 'p') await projectPage(ctx, id);
    else if (kind === 't') await taskPage(ctx, id);
    else if (kind === 'l') await taskListPage(ctx, id);
    else if (kind === 'r') await runPage(ctx, id);
    else put(view, h('p', {}, 'No such page. ', link('#/', 'Projects')));
  } catch (err) {
    put(view, errorBox(err));
  }
  if (!current()) return;
  const heading = view.querySelector('h1');
  if (heading) { heading.tabIndex = -1; heading.focus({ preventScroll: true }); }
}

function renderUser() {
  clear(userBox);
  if (!viewer) return;
  put(userBox, 
    h('span', { class: 'who' }, 'Signed in as ', h('strong', {}, viewer.name)),
    h('button', { type: 'button', class: 'secondary', onclick: () => { setToken(''); viewer = null; renderUser(); route(); } }, 'Sign out'),
  );
}

function signIn(view, message) {
  document.title = 'Sign in — Taskgraph';
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true, placeholder: 'tg_…', size: 40 });
  const status = h('p', { class: 'hint', role: 'status' }, message || '');
  const form = h('form', {
    class: 'card signin', 'aria-labelledby': 'signin-title',
    onsubmit: async (e) => {
      e.preventDefault();
      setToken(input.value.trim());
      try {
        viewer = (await query('viewer')).viewer;
      } catch (err) {
        setToken('');
        status.textContent = err instanceof GraphQLError ? `Not signed in: ${err.message}` : String(err);
        input.focus();
        return;
      }
      renderUser();
      route();
    },
  },
  h('h1', { id: 'signin-title' }, 'Sign in'),
  h('p', {}, 'Paste an API token (from ', h('code', {}, 'taskgraph token create'), '). It is kept in this tab only, until you close it or sign out.'),
  field('API token', input),
  h('button', { type: 'submit' }, 'Sign in'),
  status);
  put(view, form);
  input.focus();
  // With single sign-on configured, people sign in at their identity
  // provider instead; the token form stays for API tokens.
  ssoConfig().then((c) => {
    if (!c || !form.isConnected) return;
    const button = h('button', {
      type: 'button', class: 'sso',
      onclick: async () => {
        button.disabled = true;
        try { await startSignIn(c); } catch (err) { button.disabled = false; status.textContent = `Sign-in failed: ${err.message}`; }
      },
    }, `Sign in with ${providerName(c)}`);
    form.insertBefore(h('p', { class: 'sso' }, button, ' or:'), form.querySelector('h1').nextSibling);
    button.focus();
  });
}

// ---- projects

async function projectsPage(ctx) {
  ctx.setTitle('Projects');
  const search = ctx.params.get('q') || '';
  const after = ctx.params.get('after') || null;
  const data = await query('projects', { first: 25, after, filter: search ? { search } : null });
  const c = data.projects;
  const input = h('input', { type: 'search', name: 'q', value: search });
  put(ctx.main, 
    h('h1', {}, 'Projects'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => { e.preventDefault(); go(`#/?q=${encodeURIComponent(input.value)}`); } },
      field('Search projects', input), h('button', { type: 'submit' }, 'Search')),
    h('p', { class: 'hint' }, `${c.totalCount} project${c.totalCount === 1 ? '' : 's'}`),
    h('ul', { class: 'cards' }, c.nodes.map((p) => h('li', { class: 'card' },
      h('h2', {}, link(`#/p/${encodeURIComponent(p.slug)}`, p.name)), ' ', badge(p.status),
      h('p', {}, p.description || h('em', {}, 'No description')),
      h('p', { class: 'hint' }, `${p.slug} · owner ${p.owner.name} · updated ${fmtTime(p.updatedAt)}`)))),
    c.pageInfo.hasNextPage ? h('nav', { class: 'pager', 'aria-label': 'Pages' },
      link(`#/?q=${encodeURIComponent(search)}&after=${encodeURIComponent(c.pageInfo.endCursor)}`, 'Next page →')) : null,
  );
}

// ---- a project: lists and tasks

const TASK_STATUSES = ['DRAFT', 'EVALUATING', 'PENDING', 'BLOCKED', 'IN_PROGRESS', 'VALIDATING', 'COMPLETED', 'FAILED'];
const CATEGORIES = ['FEATURE', 'BUG', 'TASK', 'REFACTOR', 'TEST', 'DOCS', 'RESEARCH', 'INFRA'];
const PRIORITIES = ['P1', 'P2', 'P3', 'P4'];
const ORDER_FIELDS = [['PRIORITY_SCORE', 'Priority score'], ['CREATED_AT', 'Created'], ['UPDATED_AT', 'Updated'], ['DEADLINE', 'Deadline'], ['DISPLAY_ID', 'Id']];
const PAGE = 25;
const PAGE_SIZES = [5, 10, 25, 50, 100];

async function projectPage(ctx, slug) {
  const p = ctx.params;
  const filter = {};
  if (p.get('status')) filter.status = [p.get('status')];
  if (p.get('category')) filter.category = [p.get('category')];
  if (p.get('priority')) filter.priority = [p.get('priority')];
  if (p.get('list')) filter.taskListId = p.get('list');
  if (p.get('q')) filter.search = p.get('q');
  const orderBy = { field: p.get('sort') || 'PRIORITY_SCORE', direction: p.get('dir') || 'DESC' };
  const vars = { slug, filter, orderBy };
  const size = PAGE_SIZES.includes(Number(p.get('size'))) ? Number(p.get('size')) : PAGE;
  if (p.get('before')) { vars.last = size; vars.before = p.get('before'); } else { vars.first = size; vars.after = p.get('after') || null; }
  const data = await query('project', vars);
  const proj = data.project;
  if (!proj) { put(ctx.main, h('h1', {}, 'Project not found'), h('p', {}, link('#/', 'All projects'))); return; }
  ctx.setTitle(proj.name);

  const base = `#/p/${encodeURIComponent(slug)}`;
  const current = (extra) => {
    const q = new URLSearchParams();
    for (const k of ['status', 'category', 'priority', 'list', 'q', 'sort', 'dir', 'size']) if (p.get(k)) q.set(k, p.get(k));
    for (const [k, v] of Object.entries(extra || {})) q.set(k, v);
    return `${base}?${q}`;
  };
  const form = h('form', {
    class: 'filters', role: 'search', 'aria-label': 'Filter tasks',
    onsubmit: (e) => {
      e.preventDefault();
      const q = new URLSearchParams();
      for (const [k, v] of new FormData(form)) if (v) q.set(k, v);
      go(`${base}?${q}`);
    },
  },
  field('Search', h('input', { type: 'search', name: 'q', value: p.get('q') || '' })),
  field('Status', select('status', [['', 'Any'], ...TASK_STATUSES.map((s) => [s, s.replace('_', ' ')])], p.get('status') || '')),
  field('Category', select('category', [['', 'Any'], ...CATEGORIES.map((s) => [s, s])], p.get('category') || '')),
  field('Priority', select('priority', [['', 'Any'], ...PRIORITIES.map((s) => [s, s])], p.get('priority') || '')),
  field('Task list', select('list', [['', 'Any'], ...proj.taskLists.nodes.map((l) => [l.id, l.name])], p.get('list') || '')),
  field('Sort by', select('sort', ORDER_FIELDS, orderBy.field)),
  field('Direction', select('dir', [['DESC', 'Descending'], ['ASC', 'Ascending']], orderBy.direction)),
  field('Per page', select('size', PAGE_SIZES.map((n) => [String(n), String(n)]), String(size))),
  h('button', { type: 'submit' }, 'Apply'),
  link(base, 'Reset'));

  const t = proj.tasks;
  put(ctx.main, 
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, link('#/', 'Projects'), ' / ', proj.name),
    h('h1', {}, proj.name, ' ', badge(proj.status)),
    proj.description ? h('p', {}, proj.description) : null,
    h('section', { 'aria-labelledby': 'lists-h' },
      h('h2', { id: 'lists-h' }, `Task lists (${proj.taskLists.totalCount})`),
      proj.taskLists.nodes.length === 0 ? h('p', { class: 'hint' }, 'No task lists yet.') :
        h('table', {},
          h('thead', {}, h('tr', {}, ['List', 'Status', 'Progress', 'Agents', 'Updated'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, proj.taskLists.nodes.map((l) => h('tr', {},
            h('td', {}, link(`#/l/${encodeURIComponent(l.id)}`, l.name)),
            h('td', {}, badge(l.status)),
            h('td', {}, progress(l.completedTasks, l.totalTasks, `${l.name}: ${l.completedTasks} of ${l.totalTasks} tasks completed`),
              ` ${l.completedTasks}/${l.totalTasks}`,
              l.failedTasks ? h('span', { class: 'st-failed-text' }, ` ${l.failedTasks} failed`) : null),
            h('td', {}, String(l.maxParallelAgents)),
            h('td', {}, fmtTime(l.updatedAt))))))),
    h('section', { 'aria-labelledby': 'tasks-h' },
      h('h2', { id: 'tasks-h' }, `Tasks (${t.totalCount})`),
      form,
      t.nodes.length === 0 ? h('p', { class: 'hint' }, 'No task matches.') :
        h('table', { class: 'tasks' },
          h('thead', {}, h('tr', {}, ['Id', 'Title', 'Status', 'Category', 'Priority', 'Score', 'List', 'Updated'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, t.nodes.map((x) => h('tr', {},
            h('td', {}, link(`#/t/${encodeURIComponent(x.id)}`, x.displayId)),
            h('td', {}, x.title),
            h('td', {}, badge(x.status)),
            h('td', {}, x.category),
            h('td', {}, x.priority),
            h('td', { class: 'num' }, String(x.priorityScore)),
            h('td', {}, x.taskList ? link(`#/l/${encodeURIComponent(x.taskList.id)}`, x.taskList.name) : '—'),
            h('td', {}, fmtTime(x.updatedAt)))))),
      h('nav', { class: 'pager', 'aria-label': 'Task pages' },
        h('span', { class: 'hint' }, `${t.nodes.length} of ${t.totalCount} shown`),
        t.pageInfo.hasPreviousPage && t.pageInfo.startCursor ? link(current({ before: t.pageInfo.startCursor }), '← Previous page') : null,
        t.pageInfo.hasNextPage ? link(current({ after: t.pageInfo.endCursor }), 'Next page →') : null)),
  );
}

export function progress(done, total, label) {
  return h('progress', { max: Math.max(total, 1), value: done, 'aria-label': label, title: label });
}

// ---- a task

function taskRef(t) {
  return h('span', { class: 'taskref' }, link(`#/t/${encodeURIComponent(t.id)}`, t.displayId), ' ', t.title || '', ' ', t.status ? badge(t.status, 'small') : null);
}

async function taskPage(ctx, id) {
  const data = await query('task', { id });
  const t = data.task;
  if (!t) { put(ctx.main, h('h1', {}, 'Task not found')); return; }
  ctx.setTitle(t.displayId);
  const dl = (pairs) => h('dl', { class: 'facts' }, pairs.filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  const listOf = (title, items) => items && items.length ? [h('h3', {}, title), h('ul', {}, items.map((x) => h('li', {}, x)))] : null;

  const execSection = h('section', { 'aria-labelledby': 'exec-h' }, h('h2', { id: 'exec-h' }, 'Executions'), h('p', { class: 'hint' }, 'Loading…'));
  put(ctx.main, 
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, link('#/', 'Projects'), ' / ',
      link(`#/p/${encodeURIComponent(t.project.slug)}`, t.project.name), ' / ',
      t.taskList ? [link(`#/l/${encodeURIComponent(t.taskList.id)}`, t.taskList.name), ' / '] : null, t.displayId),
    h('h1', {}, `${t.displayId} ${t.title} `, badge(t.status)),
    t.description ? h('p', { class: 'desc' }, t.description) : null,
    dl([['Category', t.category], ['Priority', `${t.priority} (score ${t.priorityScore})`], ['Effort', t.effort], ['Risk', t.riskLevel],
      ['Phase', t.phase], ['Owner', t.owner], ['Blocks', String(t.blocksCount)], ['Quick win', t.isQuickWin ? 'yes' : 'no'],
      ['Deadline', t.deadline && fmtTime(t.deadline)], ['Created', fmtTime(t.createdAt)], ['Started', t.startedAt && fmtTime(t.startedAt)],
      ['Completed', t.completedAt && fmtTime(t.completedAt)], ['Version', String(t.version)],
      ['Parent', t.parentTask && taskRef(t.parentTask)]]),
    listOf('Acceptance criteria', t.acceptanceCriteria),
    listOf('Codebase tests', t.codebaseTests), listOf('API tests', t.apiTests), listOf('UI tests', t.uiTests),
    h('section', { 'aria-labelledby': 'rel-h' },
      h('h2', { id: 'rel-h' }, 'Relationships'),
      t.dependencies.length ? [h('h3', {}, 'Waits on'), h('ul', {}, t.dependencies.map((d) => h('li', {}, taskRef(d))))] : null,
      t.dependents.length ? [h('h3', {}, 'Waited on by'), h('ul', {}, t.dependents.map((d) => h('li', {}, taskRef(d))))] : null,
      t.relationships.length === 0 ? h('p', { class: 'hint' }, 'No links.') :
        h('table', {}, h('thead', {}, h('tr', {}, ['Source', 'Link', 'Target', 'Strength', 'Notes'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, t.relationships.map((r) => h('tr', {},
            h('td', {}, taskRef(r.source)), h('td', {}, r.type.replace(/_/g, ' ')), h('td', {}, taskRef(r.target)),
            h('td', {}, r.strength ?? '—'), h('td', {}, r.notes || '')))))),
    t.blocks.length ? h('section', { 'aria-labelledby': 'blocks-h' }, h('h2', { id: 'blocks-h' }, 'Blocks'),
      h('ul', {}, t.blocks.map((b) => h('li', {}, `${b.isResolved ? '✓ resolved' : '⊘ open'} · ${b.blockType}: ${b.reason}`,
        b.blockingTask ? [' (by ', link(`#/t/${encodeURIComponent(b.blockingTask.id)}`, b.blockingTask.displayId), ')'] : null)))) : null,
    h('section', { 'aria-labelledby': 'files-h' },
      h('h2', { id: 'files-h' }, 'File impacts'),
      t.fileImpacts.length === 0 ? h('p', { class: 'hint' }, 'None declared.') :
        h('table', {}, h('thead', {}, h('tr', {}, ['File', 'Operation', 'Confidence', 'Source', 'Accurate'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, t.fileImpacts.map((f) => h('tr', {}, h('td', {}, h('code', {}, f.filePath)), h('td', {}, f.operation),
            h('td', { class: 'num' }, f.confidence.toFixed(2)), h('td', {}, f.source.replace(/_/g, ' ')),
            h('td', {}, f.wasAccurate === null ? '—' : f.wasAccurate ? 'yes' : 'no')))))),
    h('section', { 'aria-labelledby': 'hist-h' },
      h('h2', { id: 'hist-h' }, 'History'),
      t.stateHistory.length === 0 ? h('p', { class: 'hint' }, 'No status change yet.') :
        h('ol', { class: 'history' }, t.stateHistory.map((s) => h('li', {},
          h('time', { datetime: s.changedAt }, fmtTime(s.changedAt)), ' ',
          s.fromStatus ? badge(s.fromStatus, 'small') : 'created', ' → ', badge(s.toStatus, 'small'),
          s.reason ? ` — ${s.reason}` : '',
          s.run ? [' (', link(`#/r/${encodeURIComponent(s.run.id)}`, `run #${s.run.runNumber}`), ')'] : null)))),
    questionsSection(t.questions),
    reasoningSection(t.project.id, t.id),
    sessionsSection(t.project.id, t.id),
    execSection,
  );
  // Executions: the task's own, newest first, across its runs.
  put(clear(execSection), h('h2', { id: 'exec-h' }, 'Executions'));
  const ex = (await query('task_executions', { id: t.id })).task;
  const execs = ex ? ex.executions.nodes : [];
  if (execs.length === 0) { put(execSection, h('p', { class: 'hint' }, 'Not executed yet.')); return; }
  if (ex.executions.totalCount > execs.length) {
    put(execSection, h('p', { class: 'hint' }, `The newest ${execs.length} of ${ex.executions.totalCount} executions.`));
  }
  for (const e of execs) {
    const logBox = h('pre', { class: 'log', tabindex: 0, 'aria-label': `Log of attempt ${e.attemptNumber}`, hidden: true });
    const btn = h('button', {
      type: 'button', class: 'secondary', 'aria-expanded': 'false',
      onclick: async () => {
        if (!logBox.hidden) { logBox.hidden = true; btn.setAttribute('aria-expanded', 'false'); btn.textContent = `Show log (${e.logLines} lines)`; return; }
        const d = await query('execution_log', { id: e.id, tail: 1000 });
        put(clear(logBox), d.node.log.length ? d.node.log.join('\n') : '(empty)');
        logBox.hidden = false; btn.setAttribute('aria-expanded', 'true'); btn.textContent = 'Hide log';
      },
    }, `Show log (${e.logLines} lines)`);
    put(execSection, h('article', { class: 'card' },
      h('h3', {}, `Attempt ${e.attemptNumber} · `, link(`#/r/${encodeURIComponent(e.run.id)}`, `run #${e.run.runNumber}`), ' ', badge(e.status)),
      dl([['Agent', e.agent.hostname || '(no hostname given)'], ['Started', fmtTime(e.startedAt)], ['Ended', e.endedAt && fmtTime(e.endedAt)],
        ['Duration', fmtDuration(e.durationMs)], ['Error', e.lastError], ['Files modified', e.filesModified.join(', ')],
        ['Commits', e.gitCommits.join(', ')]]),
      e.testResults.length ? h('ul', {}, e.testResults.map((r) => h('li', {}, badge(r.status, 'small'), ` ${r.testLevel} #${r.testIndex} ${r.testName || ''}`))) : null,
      btn, logBox));
  }
}

// start finishes a single sign-on the provider has sent the browser back
// from, then shows the page.
async function start() {
  const back = await finishSignIn();
  if (back && back.token) setToken(back.token);
  if (back && back.error) signInMessage = back.error;
  window.addEventListener('hashchange', route);
  route();
}

start();
