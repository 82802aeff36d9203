// Questions put to people: the run page's "Questions" panel (a runPanels
// entry) lists the run's PENDING questions with a button per option (or a
// text field when the question offers none) and a Skip button; the task page
// lists a task's questions with their status and answer.
import { query } from './gql.js';
import { h, put, clear, fmtTime, errorBox, field } from './dom.js';

const QUESTION_EVENTS = ['QUESTION_ASKED', 'QUESTION_ANSWERED', 'QUESTION_EXPIRED', 'QUESTION_SKIPPED'];
const STATUS_ICON = { PENDING: '?', ANSWERED: '✓', EXPIRED: '⌛', SKIPPED: '↷' };
const PRIORITY_ICON = { CRITICAL: '‼', HIGH: '!', MEDIUM: '•', LOW: '·' };

// questionBadge shows a question's status as an icon and a word.
export function questionBadge(status) {
  const cls = { PENDING: 'st-pending', ANSWERED: 'st-completed', EXPIRED: 'st-failed', SKIPPED: 'st-skipped' }[status] || '';
  return h('span', { class: `badge small ${cls}` }, h('span', { class: 'icon', 'aria-hidden': 'true' }, STATUS_ICON[status] || '•'), ' ', status);
}

function priorityTag(p) {
  return h('span', { class: `q-priority q-${p.toLowerCase()}` }, h('span', { 'aria-hidden': 'true' }, PRIORITY_ICON[p] || ''), ` ${p} priority`);
}

// What a failed answer means to the person who clicked.
function explain(err) {
  if (err.code === 'CONFLICT') return `Not answered: someone answered it first, or it has expired or been skipped (${err.message}).`;
  if (err.code === 'FORBIDDEN') return `Not answered: this token may not answer questions (${err.message}).`;
  return err.message || String(err);
}

// questionsPanel lists the run's PENDING questions and reads them again on
// every question event of the run.
export const questionsPanel = {
  id: 'questions',
  title: 'Questions',
  mount(box, page) {
    const list = h('div', { class: 'q-list' });
    const status = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
    const messages = h('div', { class: 'q-messages' });
    put(box, h('h2', { id: 'questions-h' }, 'Questions'), status, messages, list);
    box.setAttribute('aria-labelledby', 'questions-h');
    box.removeAttribute('aria-label');
    const st = { box, list, status, messages, page, loading: null, again: false, disposed: false, shown: new Map() };
    this.st = st;
    this.reload();
  },
  onEvent(ev) {
    if (this.st && QUESTION_EVENTS.includes(ev.type)) this.reload();
  },
  dispose() {
    if (this.st) this.st.disposed = true;
    this.st = null;
  },
  // reload reads the run's questions; one read at a time, and once more when
  // an event arrived during a read.
  async reload() {
    const st = this.st;
    if (!st) return;
    if (st.loading) { st.again = true; return; }
    st.loading = true;
    try {
      do {
        st.again = false;
        try {
          const d = await query('run_questions', { id: st.page.run.id });
          if (st.disposed) return;
          render(st, (d.executionRun ? d.executionRun.questions : []).filter((q) => q.status === 'PENDING'));
        } catch (err) {
          if (st.disposed) return;
          put(clear(st.messages), errorBox(err));
        }
      } while (st.again);
    } finally {
      st.loading = null;
    }
  },
};

// render redraws the pending questions; a card already shown is kept (so
// keyboard focus and a half-typed answer stay), the others are added or removed.
function render(st, pending) {
  st.status.textContent = pending.length === 0 ? 'No question is waiting for an answer.'
    : `${pending.length} question${pending.length === 1 ? '' : 's'} waiting for an answer.`;
  const ids = new Set(pending.map((q) => q.id));
  for (const [id, el] of st.shown) if (!ids.has(id)) { el.remove(); st.shown.delete(id); }
  // Newest first, as the API gives them.
  let prev = null;
  for (const q of pending) {
    let el = st.shown.get(q.id);
    if (!el) { el = card(st, q); st.shown.set(q.id, el); }
    if (prev) prev.after(el); else st.list.prepend(el);
    prev = el;
  }
}

function card(st, q) {
  const headId = `q-${q.id.replace(/[^A-Za-z0-9_-]/g, '')}`;
  const controls = h('div', { class: 'q-options', role: 'group', 'aria-label': 'Answers' });
  const art = h('article', { class: `card question q-${q.priority.toLowerCase()}`, 'aria-labelledby': headId, dataset: { question: q.id } });
  const busy = (on) => { for (const b of art.querySelectorAll('button, input')) b.disabled = on; };
  // Errors are shown above the list, not in the card: a question someone
  // else answered first leaves the list, and its error must stay readable.
  const act = async (op, input) => {
    clear(st.messages);
    busy(true);
    try {
      await query('question_action', { in: input }, op);
      // The question's event reads the list again; read it now as well, in case the stream is down.
      questionsPanel.reload();
    } catch (err) {
      busy(false);
      put(st.messages, h('p', { class: 'error', role: 'alert' }, h('strong', {}, `“${q.questionText}”: `), explain(err)));
      // Someone else answered: show the list as it now is.
      if (err.code === 'CONFLICT') questionsPanel.reload();
    }
  };
  if (q.options.length) {
    for (const o of q.options) {
      put(controls, h('button', {
        type: 'button', title: o.description || undefined, dataset: { value: o.value },
        'aria-label': `Answer ${o.label}${o.description ? `: ${o.description}` : ''}`,
        onclick: () => act('AnswerQuestion', { id: q.id, answer: o.value }),
      }, o.label, q.defaultAnswer === o.value ? ' (default)' : ''));
    }
  } else {
    const input = h('input', { type: 'text', name: 'answer', required: true, maxlength: 2000, autocomplete: 'off' });
    put(controls, h('form', {
      class: 'q-free', onsubmit: (e) => { e.preventDefault(); if (input.value.trim()) act('AnswerQuestion', { id: q.id, answer: input.value.trim() }); },
    }, field('Your answer', input), h('button', { type: 'submit' }, 'Send answer')));
  }
  put(controls, h('button', {
    type: 'button', class: 'secondary', 'aria-label': 'Skip this question',
    onclick: () => act('SkipQuestion', { id: q.id, reason: 'skipped from the dashboard' }),
  }, 'Skip'));
  const facts = [
    priorityTag(q.priority),
    q.blocking ? h('span', { class: 'q-blocking' }, h('span', { 'aria-hidden': 'true' }, '⊘'), ' blocking: its task waits for the answer') : h('span', {}, 'not blocking'),
    q.expiresAt ? h('span', {}, 'expires ', h('time', { datetime: q.expiresAt }, fmtTime(q.expiresAt)), ` (then ${q.timeoutAction.replace(/_/g, ' ').toLowerCase()})`) : h('span', {}, 'never expires'),
    q.task ? h('span', {}, 'about ', h('a', { href: `#/t/${encodeURIComponent(q.task.id)}` }, q.task.displayId)) : null,
    q.agent ? h('span', {}, 'asked by an agent') : null,
  ].filter(Boolean);
  put(art,
    h('h3', { id: headId }, questionBadge(q.status), ' ', q.questionText),
    h('p', { class: 'q-facts hint' }, facts.map((f, i) => [i ? ' · ' : '', f])),
    controls);
  return art;
}

// questionsSection is the task page's list of a task's questions.
export function questionsSection(questions) {
  const sec = h('section', { 'aria-labelledby': 'questions-h' }, h('h2', { id: 'questions-h' }, `Questions (${questions.length})`));
  if (questions.length === 0) return put(sec, h('p', { class: 'hint' }, 'No question asked about this task.'));
  return put(sec, h('table', { class: 'questions' },
    h('thead', {}, h('tr', {}, ['Question', 'Status', 'Answer', 'Priority', 'Asked', 'Run'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, questions.map((q) => {
      const label = (v) => (q.options.find((o) => o.value === v) || {}).label || v;
      let answer = '—';
      if (q.status === 'ANSWERED') {
        answer = [label(q.answer), h('span', { class: 'hint' },
          q.answeredByTimeout ? ' (by timeout: the default)' : q.answeredBy ? ` by ${q.answeredBy.name}` : '',
          q.answeredAt ? `, ${fmtTime(q.answeredAt)}` : '')];
      } else if (q.status === 'PENDING') {
        answer = h('span', { class: 'hint' }, q.expiresAt ? `waiting, expires ${fmtTime(q.expiresAt)}` : 'waiting');
      }
      return h('tr', { dataset: { question: q.id } },
        h('td', {}, q.questionText, q.blocking ? h('span', { class: 'hint' }, ' (blocking)') : null),
        h('td', {}, questionBadge(q.status)),
        h('td', {}, answer),
        h('td', {}, q.priority),
        h('td', {}, fmtTime(q.createdAt)),
        h('td', {}, q.run ? h('a', { href: `#/r/${encodeURIComponent(q.run.id)}` }, `run #${q.run.runNumber}`) : '—'));
    }))));
}
