// Agent sessions: the run page's "Sessions" panel (a runPanels entry) and
// the task page's "Sessions" section list the sessions of the run or the task
// (queries/sessions.graphql) with their status, state version, todo list
// progress and latest ReAct step; "Show steps and lessons" reads one session
// in full (queries/session_detail.graphql): its todo lists, its ReAct steps
// (thought, action, observation) and its lessons.
import { query } from './gql.js';
import { h, put, clear, badge, icon, fmtTime, errorBox } from './dom.js';

const SESSION_EVENTS = ['SESSION_STATUS_CHANGED', 'SESSION_STATE_SAVED', 'TODO_LIST_CREATED', 'TODO_ITEM_CHANGED',
  'REACT_STEP_RECORDED', 'LESSON_RECORDED'];
const OBSERVATION_MAX = 400; // characters of an observation shown in the table

const plural = (n, one, many) => `${n} ${n === 1 ? one : many || `${one}s`}`;
const clip = (s, n) => (s.length > n ? `${s.slice(0, n)}…` : s);
let seq = 0; // element ids stay unique when one session is shown twice (a task page's reasoning and sessions)
const domID = (prefix) => `${prefix}-${++seq}`;
const yesNo = (ok, error) => (ok === null || ok === undefined ? '—' : ok ? '✓ yes' : `✗ no${error ? `: ${error}` : ''}`);

// todoProgress is a todo list's progress: a labelled bar and the same as words.
function todoProgress(list) {
  const done = list.items.filter((i) => i.status === 'COMPLETED' || i.status === 'SKIPPED').length;
  const failed = list.items.filter((i) => i.status === 'FAILED').length;
  const words = `${done} of ${list.items.length} items done${failed ? `, ${failed} failed` : ''}`;
  return h('span', { class: 'todo-progress' },
    h('progress', { max: Math.max(list.items.length, 1), value: done, 'aria-label': `Todo list: ${words}` }), ' ', words);
}

// summary is what a session's card always shows, redrawn on every read.
function summary(s, { withTask }) {
  const list = s.activeTodoList;
  const last = s.todoLists.at(-1);
  const step = s.steps.nodes.at(-1);
  return [
    h('p', { class: 'hint' },
      `${s.profile} · state v${s.stateVersion} · ${plural(s.steps.totalCount, 'ReAct step')} · ${plural(s.lessons.totalCount, 'lesson')} · started ${fmtTime(s.createdAt)}`,
      withTask && s.task ? [' · ', h('a', { href: `#/t/${encodeURIComponent(s.task.id)}` }, s.task.displayId)] : null,
      s.agent ? ` · agent ${s.agent.hostname || 'without a host name'}` : null),
    h('p', { class: 's-todo' }, 'Todo list: ',
      list ? [badge(list.status, 'small'), ` v${list.version} `, todoProgress(list)]
        : last ? ['none active (the last one is ', badge(last.status, 'small'), ')']
          : 'none yet'),
    step ? h('p', { class: 's-last-step' }, `Latest step ${step.stepId}: `,
      step.thought ? h('q', {}, clip(step.thought, 160)) : null,
      step.action ? [' → ', h('code', {}, clip(step.action, 80))] : null,
      step.success === null ? null : ` (${yesNo(step.success)})`) : null,
  ];
}

// observationText shows a step's observation (any JSON) as text.
function observationText(o) {
  if (o === null || o === undefined) return '—';
  const text = typeof o === 'string' ? o : JSON.stringify(o);
  return text.length > OBSERVATION_MAX ? [clip(text, OBSERVATION_MAX), h('span', { class: 'hint' }, ` (${text.length} characters)`)] : text;
}

// stepsTable lists ReAct steps: thought, action, observation, success.
export function stepsTable(steps) {
  if (steps.nodes.length === 0) return h('p', { class: 'hint' }, 'No ReAct step recorded.');
  const shown = steps.nodes.length < steps.totalCount ? `the latest ${steps.nodes.length} of ${steps.totalCount}` : steps.totalCount;
  return h('table', { class: 'react-steps' },
    h('caption', {}, `ReAct steps (${shown})`),
    h('thead', {}, h('tr', {}, ['Step', 'Thought', 'Action', 'Observation', 'Success'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, steps.nodes.map((st) => h('tr', { dataset: { step: String(st.stepId) } },
      h('td', { class: 'num' }, String(st.stepId)),
      h('td', {}, st.thought || '—'),
      h('td', {}, st.action ? h('code', {}, st.action) : '—',
        st.actionType ? h('span', { class: 'hint' }, ` (${st.actionType.replace(/_/g, ' ').toLowerCase()})`) : null),
      h('td', { class: 'obs' }, observationText(st.observation)),
      h('td', {}, yesNo(st.success, st.error))))));
}

function todoLists(lists) {
  if (lists.length === 0) return h('p', { class: 'hint' }, 'No todo list.');
  // Newest first: the current plan leads.
  return lists.slice().reverse().map((l) => h('div', { class: 'todo-list' },
    h('h4', {}, 'Todo list ', badge(l.status, 'small'), ` v${l.version}`, l.mission ? [': ', l.mission] : null),
    h('ol', { start: 0 }, l.items.map((i) => h('li', { dataset: { status: i.status } },
      h('span', { class: `todo-status st-${i.status.toLowerCase()}` }, h('span', { 'aria-hidden': 'true' }, icon(i.status)), ' ', i.status.replace(/_/g, ' ')),
      ' ', i.description,
      i.dependencies.length ? h('span', { class: 'hint' }, ` (after ${i.dependencies.join(', ')})`) : null,
      i.chosenTool ? h('span', { class: 'hint' }, ` · tool `, h('code', {}, i.chosenTool)) : null)))));
}

function lessonsList(lessons) {
  if (lessons.nodes.length === 0) return h('p', { class: 'hint' }, 'No lesson recorded.');
  return [h('h4', {}, `Lessons (${lessons.totalCount})`),
    h('ul', { class: 'lessons' }, lessons.nodes.map((l) => h('li', { dataset: { lesson: l.id } },
      h('strong', {}, l.lesson), ' ',
      h('span', { class: 'hint' }, `confidence ${(l.confidence * 100).toFixed(0)}%${l.toolName ? ` · tool ${l.toolName}` : ''}`),
      h('br'), `Context: ${l.context}. Worked: ${l.whatWorked}.`, l.whatFailed ? ` Failed: ${l.whatFailed}.` : '')))];
}

// sessionDetail is a button that reads a session in full and shows it below
// it; refresh() reads it again while it is shown.
export function sessionDetail(sessionId) {
  const box = h('div', { class: 's-detail', id: domID('sd'), hidden: true });
  const label = (open) => (open ? 'Hide steps and lessons' : 'Show steps and lessons');
  const load = async () => {
    try {
      const d = await query('session_detail', { id: sessionId });
      const s = d.agentSession;
      if (!s) { put(clear(box), h('p', { class: 'hint' }, 'The session is gone.')); return; }
      put(clear(box), todoLists(s.todoLists), stepsTable(s.steps), lessonsList(s.lessons));
    } catch (err) {
      put(clear(box), errorBox(err));
    }
  };
  const btn = h('button', {
    type: 'button', class: 'secondary', 'aria-expanded': 'false', 'aria-controls': box.id,
    onclick: async () => {
      const open = box.hidden;
      if (!open) { box.hidden = true; btn.setAttribute('aria-expanded', 'false'); btn.textContent = label(false); return; }
      btn.disabled = true;
      await load();
      btn.disabled = false;
      box.hidden = false; btn.setAttribute('aria-expanded', 'true'); btn.textContent = label(true);
    },
  }, label(false));
  return { btn, box, refresh: () => (box.hidden ? Promise.resolve() : load()) };
}

// sessionCard is one session; update(s) redraws its summary in place, so
// focus and an open detail stay.
function sessionCard(s, opts) {
  const headId = domID('s');
  const head = h('h3', { id: headId });
  const sum = h('div', { class: 's-summary' });
  const detail = sessionDetail(s.id);
  const el = h('article', { class: 'card session', 'aria-labelledby': headId, dataset: { session: s.id } }, head, sum, detail.btn, detail.box);
  const update = (x) => {
    el.dataset.status = x.status;
    put(clear(head), badge(x.status, 'small'), ' ', clip(x.mission, 120));
    put(clear(sum), summary(x, opts));
  };
  update(s);
  return { el, update, refresh: detail.refresh };
}

// sessionsSection is the task page's list of the task's agent sessions; it
// fills itself once its read returns.
export function sessionsSection(projectId, taskId) {
  const sec = h('section', { 'aria-labelledby': 'sessions-h', class: 'sessions-section' },
    h('h2', { id: 'sessions-h' }, 'Agent sessions'), h('p', { class: 'hint' }, 'Loading…'));
  query('sessions', { projectId, taskId }).then((d) => {
    const c = d.agentSessions;
    put(clear(sec), h('h2', { id: 'sessions-h' }, `Agent sessions (${c.totalCount})`));
    if (c.nodes.length === 0) { put(sec, h('p', { class: 'hint' }, 'No agent session for this task.')); return; }
    for (const s of c.nodes) put(sec, sessionCard(s, { withTask: false }).el);
  }, (err) => put(clear(sec), h('h2', { id: 'sessions-h' }, 'Agent sessions'), errorBox(err)));
  return sec;
}

// sessionsPanel lists the run's agent sessions (those opened for its
// agents) and reads them again on every session event of the run (one read
// at a time, and once more when an event came during it). Cards are kept
// and updated in place; an open detail is read again.
export const sessionsPanel = {
  id: 'sessions',
  title: 'Agent sessions',
  mount(box, page) {
    const list = h('div', { class: 's-list' });
    const status = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
    const messages = h('div', {});
    put(box, h('h2', { id: 'sessions-h' }, 'Agent sessions'), status, messages, list);
    box.setAttribute('aria-labelledby', 'sessions-h');
    box.removeAttribute('aria-label');
    this.st = { list, status, messages, page, cards: new Map(), loading: false, again: false, disposed: false };
    this.reload();
  },
  onEvent(ev) {
    if (this.st && SESSION_EVENTS.includes(ev.type)) this.reload();
  },
  dispose() {
    if (this.st) this.st.disposed = true;
    this.st = null;
  },
  async reload() {
    const st = this.st;
    if (!st) return;
    if (st.loading) { st.again = true; return; }
    st.loading = true;
    try {
      do {
        st.again = false;
        try {
          const run = st.page.run;
          const d = await query('sessions', { projectId: run.project.id, runId: run.id });
          if (st.disposed) return;
          clear(st.messages);
          render(st, d.agentSessions);
        } catch (err) {
          if (st.disposed) return;
          put(clear(st.messages), errorBox(err));
        }
      } while (st.again);
    } finally {
      st.loading = false;
    }
  },
};

// render shows the run's sessions, newest first, keeping the cards already
// shown where they are (so keyboard focus stays).
function render(st, c) {
  st.status.textContent = c.totalCount === 0 ? 'No agent session in this run.'
    : c.totalCount > c.nodes.length ? `The newest ${c.nodes.length} of ${c.totalCount} agent sessions.`
      : `${plural(c.totalCount, 'agent session')}.`;
  const ids = new Set(c.nodes.map((s) => s.id));
  for (const [id, card] of st.cards) if (!ids.has(id)) { card.el.remove(); st.cards.delete(id); }
  let at = st.list.firstElementChild;
  for (const s of c.nodes) {
    let card = st.cards.get(s.id);
    if (card) {
      card.update(s);
      card.refresh();
    } else {
      card = sessionCard(s, { withTask: true });
      st.cards.set(s.id, card);
    }
    if (card.el === at) at = at.nextElementSibling;
    else st.list.insertBefore(card.el, at);
  }
}
