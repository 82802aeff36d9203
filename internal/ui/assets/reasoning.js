// Reasoning executions: the run page's "Reasoning" panel (a runPanels entry)
// and the task page's "Reasoning" section list the executions of the run or
// the task (queries/reasoning.graphql) with their passes and the score
// trajectory drawn as a small chart with a table alternative; an execution's
// agent session shows its steps and lessons on request (sessions.js).
import { query } from './gql.js';
import { h, put, svg, clear, badge, fmtTime, fmtDuration, errorBox } from './dom.js';
import { sessionDetail } from './sessions.js';

const REASONING_EVENTS = ['REASONING_STARTED', 'PASS_STARTED', 'PASS_COMPLETED', 'CONVERGENCE_ASSESSED', 'REASONING_FINISHED'];
const R_ICON = { RUNNING: '▶', CONVERGED: '✓', TTL_EXPIRED: '⌛', FAILED: '✗' };
const R_CLASS = { RUNNING: 'st-running', CONVERGED: 'st-completed', TTL_EXPIRED: 'st-skipped', FAILED: 'st-failed' };

// reasoningBadge shows an execution's status as an icon and a word.
export function reasoningBadge(status) {
  return h('span', { class: `badge small ${R_CLASS[status] || ''}` },
    h('span', { class: 'icon', 'aria-hidden': 'true' }, R_ICON[status] || '•'), ' ', status.replace(/_/g, ' '));
}

const pct = (x) => `${(x * 100).toFixed(0)}%`;
let chartSeq = 0;

// scoreChart draws completeness (solid line, circles) and coherence (dashed
// line, squares) per pass, with the thresholds as faint lines; the same
// figures are in a table below it, so neither colour nor the picture is the
// only way to read them.
export function scoreChart(ex) {
  const pts = ex.statistics.scoreTrajectory;
  const id = `rc-${++chartSeq}`;
  const rows = pts.map((p) => h('tr', {},
    h('td', { class: 'num' }, String(p.passNumber)), h('td', { class: 'num' }, p.completenessScore.toFixed(2)),
    h('td', { class: 'num' }, p.coherenceScore.toFixed(2)), h('td', {}, p.converged ? '✓ yes' : '✗ no')));
  const table = h('table', { class: 'score-table' },
    h('caption', {}, 'Scores per pass'),
    h('thead', {}, h('tr', {}, ['Pass', 'Completeness', 'Coherence', 'Converged'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows));
  if (pts.length === 0) return h('div', { class: 'score' }, h('p', { class: 'hint' }, 'No pass assessed yet.'));
  const W = 220, H = 90, L = 28, R = 8, T = 8, B = 18;
  const n = pts.length;
  const x = (i) => L + (n === 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (n - 1));
  const y = (v) => T + (1 - Math.max(0, Math.min(1, v))) * (H - T - B);
  const line = (key) => pts.map((p, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(p[key]).toFixed(1)}`).join(' ');
  const last = pts[n - 1];
  const desc = `Completeness ${pts.map((p) => pct(p.completenessScore)).join(', ')}; coherence ${pts.map((p) => pct(p.coherenceScore)).join(', ')}, over ${n} pass${n === 1 ? '' : 'es'}.`;
  const chart = svg('svg', { class: 'score-svg', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-t ${id}-d` },
    svg('title', { id: `${id}-t` }, 'Score trajectory'),
    svg('desc', { id: `${id}-d` }, desc),
    [0, 0.5, 1].map((v) => [svg('line', { class: 'grid', x1: L, x2: W - R, y1: y(v), y2: y(v) }),
      svg('text', { class: 'axis', x: L - 4, y: y(v) + 3, 'text-anchor': 'end' }, v.toFixed(1))]),
    svg('line', { class: 'thr', x1: L, x2: W - R, y1: y(ex.completenessThreshold), y2: y(ex.completenessThreshold) }),
    pts.map((p, i) => svg('text', { class: 'axis', x: x(i), y: H - 4, 'text-anchor': 'middle' }, String(p.passNumber))),
    svg('path', { class: 'completeness', d: line('completenessScore') }),
    svg('path', { class: 'coherence', d: line('coherenceScore') }),
    pts.map((p, i) => [
      svg('circle', { class: 'completeness', cx: x(i), cy: y(p.completenessScore), r: 3 }),
      svg('rect', { class: 'coherence', x: x(i) - 2.5, y: y(p.coherenceScore) - 2.5, width: 5, height: 5 })]));
  return h('div', { class: 'score' },
    h('figure', {},
      chart,
      h('figcaption', { class: 'hint' }, '● completeness (solid), ■ coherence (dashed), by pass; last: ',
        `${pct(last.completenessScore)} / ${pct(last.coherenceScore)}`)),
    h('details', { class: 'score-text' }, h('summary', {}, 'Scores as a table'), table));
}

function passesTable(ex) {
  if (ex.passes.length === 0) return h('p', { class: 'hint' }, 'No pass yet.');
  return h('table', { class: 'passes' },
    h('caption', {}, 'Passes'),
    h('thead', {}, h('tr', {}, ['Pass', 'Phase', 'Duration', 'Converged'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ex.passes.map((p) => h('tr', {},
      h('td', { class: 'num' }, String(p.passNumber)), h('td', {}, p.phase),
      h('td', { class: 'num' }, p.durationMs === null ? (p.endedAt ? '—' : 'running') : fmtDuration(p.durationMs)),
      h('td', {}, !p.convergence ? 'not assessed' : p.convergence.converged ? '✓ yes' : '✗ no')))));
}

// sessionBox shows an execution's agent session, with a button that reads
// its todo lists, ReAct steps and lessons (sessions.js).
function sessionBox(s) {
  const detail = sessionDetail(s.id);
  return h('div', { class: 'session' },
    h('p', {}, 'Agent session: ', h('q', {}, s.mission), ' ', badge(s.status, 'small')), detail.btn, detail.box);
}

// executionCard is one execution: status, what it reasons about, passes, chart, session.
function executionCard(ex, { withTask, withRun, compact }) {
  const st = ex.statistics;
  return h('article', { class: 'card reasoning', dataset: { reasoning: ex.id } },
    h('h3', {}, reasoningBadge(ex.status), ' ', ex.taskInput.length > 80 ? `${ex.taskInput.slice(0, 80)}…` : ex.taskInput),
    h('p', { class: 'hint' },
      `${st.totalPasses} pass${st.totalPasses === 1 ? '' : 'es'} · ${st.convergenceAchieved ? 'converged' : 'not converged'} · ${fmtDuration(st.totalTimeMs)} · TTL ${ex.ttl} · started ${fmtTime(ex.createdAt)}`,
      withTask && ex.task ? [' · about ', h('a', { href: `#/t/${encodeURIComponent(ex.task.id)}` }, ex.task.displayId)] : null,
      withRun && ex.run ? [' · ', h('a', { href: `#/r/${encodeURIComponent(ex.run.id)}` }, `run #${ex.run.runNumber}`)] : null),
    compact ? null : passesTable(ex),
    scoreChart(ex),
    !compact && ex.session ? sessionBox(ex.session) : null);
}

// reasoningSection is the task page's list of a task's reasoning executions
// and their agent sessions; it fills itself once its read returns.
export function reasoningSection(projectId, taskId) {
  const sec = h('section', { 'aria-labelledby': 'reasoning-h', class: 'reasoning-section' },
    h('h2', { id: 'reasoning-h' }, 'Reasoning'), h('p', { class: 'hint' }, 'Loading…'));
  query('reasoning', { projectId, taskId }).then((d) => {
    const c = d.reasoningExecutions;
    put(clear(sec), h('h2', { id: 'reasoning-h' }, `Reasoning (${c.totalCount})`));
    if (c.nodes.length === 0) { put(sec, h('p', { class: 'hint' }, 'No reasoning execution about this task.')); return; }
    for (const ex of c.nodes) put(sec, executionCard(ex, { withRun: true }));
  }, (err) => put(clear(sec), h('h2', { id: 'reasoning-h' }, 'Reasoning'), errorBox(err)));
  return sec;
}

// reasoningPanel lists the run's reasoning executions and reads them again
// on every reasoning event of the run (one read at a time, and once more when
// an event came during it).
export const reasoningPanel = {
  id: 'reasoning',
  title: 'Reasoning',
  mount(box, page) {
    const list = h('div', { class: 'r-list' });
    const status = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
    put(box, h('h2', { id: 'reasoning-h' }, 'Reasoning'), status, list);
    box.setAttribute('aria-labelledby', 'reasoning-h');
    box.removeAttribute('aria-label');
    this.st = { list, status, page, loading: false, again: false, disposed: false };
    this.reload();
  },
  onEvent(ev) {
    if (this.st && REASONING_EVENTS.includes(ev.type)) this.reload();
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
          const d = await query('reasoning', { projectId: run.project.id, runId: run.id });
          if (st.disposed) return;
          const c = d.reasoningExecutions;
          st.status.textContent = c.totalCount === 0 ? 'No reasoning execution in this run.'
            : `${c.totalCount} reasoning execution${c.totalCount === 1 ? '' : 's'}.`;
          put(clear(st.list), c.nodes.map((ex) => executionCard(ex, { withTask: true, compact: true })));
        } catch (err) {
          if (st.disposed) return;
          put(clear(st.list), errorBox(err));
        }
      } while (st.again);
    } finally {
      st.loading = false;
    }
  },
};
