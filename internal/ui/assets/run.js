// A run, live: the run's tree is read once (queries/run.graphql), then kept
// current by its events (queries/run_events.graphql) from the cursor of the
// last event read; after a dropped connection the subscription resumes from
// the last event received.
import { query, subscribe } from './gql.js';
import { h, put, svg, clear, badge, icon, link, fmtClock, fmtDuration, errorBox, statusClass } from './dom.js';
import { questionsPanel } from './questions.js';
import { reasoningPanel } from './reasoning.js';
import { sessionsPanel } from './sessions.js';

const FEED_MAX = 200;
const LOG_TAIL = 200;
const GANTT_ROWS = 80;
const ACTIVE = ['PENDING', 'RUNNING', 'PAUSED'];

// runPanels are the run page's extension point: a panel is
// { id, title, mount(container, page), onEvent(event, page), dispose() }.
// page exposes { run, tasks, agents, selectTask(id) }. The run's pending
// questions are one (questions.js), the run's reasoning executions another
// (reasoning.js), the agent sessions of its agents a third (sessions.js).
export const runPanels = [questionsPanel, reasoningPanel, sessionsPanel];

export async function runPage(ctx, id) {
  const data = await query('run', { id, feed: 100 });
  const r = data.executionRun;
  if (!r) { put(ctx.main, h('h1', {}, 'Run not found')); return; }
  ctx.setTitle(`Run #${r.runNumber} of ${r.taskList.name}`);

  const st = {
    run: r,
    waves: r.waves,
    tasks: new Map(),
    agents: new Map(r.agents.map((a) => [a.id, a])),
    execByTask: new Map(),
    selected: null,
    log: null, // { execId, count, lines }
    pendingLog: null, // { execId, events }: LOG_APPENDED events that came while the tail was read
    feed: [],
  };
  const load = (tree) => {
    st.run = { ...st.run, ...tree };
    st.waves = tree.waves;
    for (const w of tree.waves) {
      for (const a of w.assignments) {
        st.tasks.set(a.task.id, { ...a.task, wave: w.waveNumber, taskStatus: a.taskStatus, startedAt: a.startedAt, completedAt: a.completedAt });
      }
    }
    st.agents = new Map(tree.agents.map((a) => [a.id, a]));
    for (const e of tree.executions) st.execByTask.set(e.task.id, e.id);
  };
  load(r);
  st.feed = r.events.nodes.slice().reverse();

  // ---- layout
  const counters = h('dl', { class: 'counters', 'aria-label': 'Run counters' });
  const controls = h('div', { class: 'controls' });
  const lanes = h('div', { class: 'lanes' });
  const agentsBox = h('div', { class: 'agents' });
  const gantt = h('div', { class: 'gantt', role: 'img' });
  const ganttTable = h('tbody', {});
  const ganttText = h('details', { class: 'gantt-text' }, h('summary', {}, 'Timeline as a table'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Task', 'Status', 'Claimed', 'Ended', 'Took'].map((c) => h('th', { scope: 'col' }, c)))), ganttTable));
  const feed = h('ol', { class: 'feed', 'aria-label': 'Events, newest first' });
  const logTitle = h('h2', { id: 'log-h' }, 'Log');
  const logBox = h('pre', { class: 'log live', tabindex: 0, 'aria-labelledby': 'log-h' });
  const logHint = h('p', { class: 'hint' }, 'Select a task card to follow its log.');
  const panels = h('div', { class: 'panels' });
  const headline = h('h1', {});
  const failure = h('div', {});
  put(ctx.main, 
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, link('#/', 'Projects'), ' / ',
      link(`#/p/${encodeURIComponent(r.project.slug)}`, r.project.name), ' / ',
      link(`#/l/${encodeURIComponent(r.taskList.id)}`, r.taskList.name), ` / Run #${r.runNumber}`),
    headline, failure, controls, counters,
    h('div', { class: 'run-grid' },
      h('section', { class: 'area-lanes', 'aria-labelledby': 'lanes-h' }, h('h2', { id: 'lanes-h' }, 'Waves'), lanes),
      // The panels (pending questions first) head the side column: they ask for a person's attention.
      h('div', { class: 'area-side' }, panels,
        h('section', { class: 'area-agents', 'aria-labelledby': 'agents-h' }, h('h2', { id: 'agents-h' }, 'Agents'), agentsBox)),
      h('section', { class: 'area-gantt', 'aria-labelledby': 'gantt-h' }, h('h2', { id: 'gantt-h' }, 'Timeline'), gantt, ganttText),
      h('section', { class: 'area-log', 'aria-labelledby': 'log-h' }, logTitle, logHint, logBox),
      h('section', { class: 'area-feed', 'aria-labelledby': 'feed-h' }, h('h2', { id: 'feed-h' }, 'Events'), feed)),
  );

  // ---- counters and controls
  function renderHead() {
    const x = st.run;
    put(clear(headline), `Run #${x.runNumber} of ${r.taskList.name} `, badge(x.status));
    clear(failure);
    if (x.failureReason || x.lastError) put(failure, h('p', { class: 'error', role: 'alert' }, x.failureReason || x.lastError));
    const c = (k, v, cls) => h('div', { class: 'counter' }, h('dt', {}, k), h('dd', { class: cls || '' }, v));
    put(clear(counters), 
      c('Tasks', `${x.tasksTotal}`),
      c('Completed', `✓ ${x.tasksCompleted}`, 'st-completed-text'),
      c('Failed', `✗ ${x.tasksFailed}`, x.tasksFailed ? 'st-failed-text' : ''),
      c('Skipped', `↷ ${x.tasksSkipped}`),
      c('Blocked', `⊘ ${x.tasksBlocked}`),
      c('Waves', `${x.wavesCompleted}/${x.wavesTotal}${x.currentWave ? ` (now ${x.currentWave})` : ''}`),
      c('Agents', `${x.agentsActive} active / ${x.agentsSpawned} spawned (max ${x.maxParallelReached} of ${r.maxParallelAgents})`),
      c('Started', fmtClock(x.startedAt)),
      c('Duration', x.durationMs != null ? fmtDuration(x.durationMs) : x.startedAt ? fmtDuration(Date.now() - Date.parse(x.startedAt)) : '—'),
    );
    if (controls.dataset.status === x.status) return; // keep focus on the buttons
    controls.dataset.status = x.status;
    clear(controls);
    const act = (label, op) => h('button', {
      type: 'button', class: 'secondary',
      onclick: async (e) => {
        e.currentTarget.disabled = true;
        try { await query('run_action', { in: { runId: id, reason: 'from the dashboard' } }, op); } catch (err) { put(controls, errorBox(err)); }
      },
    }, label);
    if (x.status === 'RUNNING') put(controls, act('Pause run', 'PauseRun'));
    if (x.status === 'PAUSED') put(controls, act('Resume run', 'ResumeRun'));
    if (ACTIVE.includes(x.status)) put(controls, act('Cancel run', 'CancelRun'));
  }

  // ---- lanes: one per wave, a card per task; cards are updated in place so
  // that keyboard focus stays where it is.
  const cards = new Map();
  const laneHeads = new Map();
  function buildLanes() {
    clear(lanes); cards.clear(); laneHeads.clear();
    // Large runs get compact cards (the title stays in the card's label and tooltip).
    lanes.classList.toggle('compact', st.tasks.size > 100);
    for (const w of st.waves) {
      const head = h('h3', { id: `wave-${w.waveNumber}` });
      laneHeads.set(w.waveNumber, head);
      put(lanes, h('section', { class: 'lane', 'aria-labelledby': `wave-${w.waveNumber}`, dataset: { wave: w.waveNumber } },
        head,
        h('ul', { class: 'lane-cards' }, w.assignments.map((a) => {
          const btn = h('button', { type: 'button', class: 'task-card', onclick: () => selectTask(a.task.id) });
          cards.set(a.task.id, btn);
          return h('li', {}, btn);
        }))));
    }
    updateLanes();
  }
  function updateLanes() {
    for (const w of st.waves) {
      const head = laneHeads.get(w.waveNumber);
      // Counted from the cards, which events keep current between reads of the tree.
      const done = w.assignments.filter((a) => (st.tasks.get(a.task.id) || {}).status === 'COMPLETED').length;
      if (head) put(clear(head), `Wave ${w.waveNumber} `, badge(w.status, 'small'), h('span', { class: 'hint' }, ` ${done}/${w.taskCount} done`));
    }
    const agentOf = new Map();
    for (const a of st.agents.values()) if (!a.terminatedAt && ['SPAWNING', 'IDLE', 'RUNNING', 'COMPLETING'].includes(a.status)) agentOf.set(a.task.id, a);
    for (const [tid, btn] of cards) {
      const t = st.tasks.get(tid);
      const status = t.taskStatus === 'SKIPPED' ? 'SKIPPED' : t.status;
      const a = agentOf.get(tid);
      // Large runs: only the cards whose state changed are rebuilt.
      const key = `${status}|${st.selected === tid}|${a ? a.progressPercent : ''}`;
      if (btn.dataset.key === key) continue;
      btn.dataset.key = key;
      btn.className = `task-card ${statusClass(status)}${st.selected === tid ? ' selected' : ''}`;
      btn.dataset.status = status;
      btn.dataset.task = t.displayId;
      btn.setAttribute('aria-pressed', st.selected === tid ? 'true' : 'false');
      btn.title = t.title;
      btn.setAttribute('aria-label', `${t.displayId} ${t.title}: ${status.replace(/_/g, ' ')}${a ? `, ${a.progressPercent}%` : ''}`);
      put(clear(btn), 
        h('span', { class: 'card-id' }, t.displayId),
        h('span', { class: 'card-title' }, t.title),
        h('span', { class: 'card-status' }, h('span', { 'aria-hidden': 'true' }, icon(status)), ' ', status.replace(/_/g, ' ')),
        a ? h('span', { class: 'card-progress', 'aria-hidden': 'true' }, h('span', { class: 'bar', style: { width: `${a.progressPercent}%` } })) : null,
      );
    }
  }

  // ---- agents
  // A finished agent reads by how it ended: its task completed or failed, its
  // run was cancelled, or it was ended (missed heartbeats, a question's
  // timeout, a lost lease) — not as a bare TERMINATED.
  function agentBadge(a) {
    if (a.status !== 'TERMINATED' || !a.endReason) return badge(a.status, 'small');
    const shown = { TASK_COMPLETED: 'COMPLETED', TASK_FAILED: 'FAILED', RUN_CANCELLED: 'CANCELLED' }[a.endReason];
    if (shown) return badge(shown, 'small');
    return h('span', { title: a.terminationReason || '' }, badge('INTERRUPTED', 'small'), ' ', a.endReason.replace(/_/g, ' ').toLowerCase());
  }

  // A finished agent's progress is its outcome: a completed task is done
  // whatever its agent last reported; an ended one shows no bar.
  function agentProgress(a) {
    if (a.endReason === 'TASK_COMPLETED') return [h('progress', { max: 100, value: 100, 'aria-label': `${a.task.displayId} progress` }), ' done'];
    if (a.endReason) return ['—'];
    return [h('progress', { max: 100, value: a.progressPercent, 'aria-label': `${a.task.displayId} progress` }), ` ${a.progressPercent}%`];
  }

  function renderAgents() {
    const list = [...st.agents.values()];
    clear(agentsBox);
    if (list.length === 0) { put(agentsBox, h('p', { class: 'hint' }, 'No agent has claimed a task yet.')); return; }
    list.sort((a, b) => Number(!!a.terminatedAt) - Number(!!b.terminatedAt) || Date.parse(b.spawnedAt) - Date.parse(a.spawnedAt));
    put(agentsBox, h('table', { class: 'agents-table' },
      h('thead', {}, h('tr', {}, ['Task', 'Status', 'Progress', 'Current step', 'Heartbeat'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, list.slice(0, 50).map((a) => h('tr', {},
        h('td', {}, h('button', { type: 'button', class: 'linkish', title: `agent on ${a.hostname || '?'}`, onclick: () => selectTask(a.task.id) }, a.task.displayId)),
        h('td', {}, agentBadge(a)),
        h('td', {}, ...agentProgress(a)),
        h('td', {}, (!a.endReason && a.currentStep) || '—'),
        h('td', {}, fmtClock(a.lastHeartbeatAt)))))),
    list.length > 50 ? h('p', { class: 'hint' }, `and ${list.length - 50} more`) : null);
  }

  // ---- Gantt: each task from its claim to its completion (or now).
  function renderGantt() {
    const claimed = [...st.tasks.values()].filter((t) => t.startedAt).sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
    // A large run shows its latest GANTT_ROWS claims (the table below has them all).
    const rows = claimed.slice(-GANTT_ROWS);
    clear(gantt);
    ganttText.hidden = rows.length === 0;
    if (rows.length === 0) { put(gantt, h('p', { class: 'hint' }, 'No task claimed yet.')); return; }
    const t0 = Date.parse(st.run.startedAt || rows[0].startedAt);
    const now = Date.now();
    const t1 = Math.max(st.run.completedAt ? Date.parse(st.run.completedAt) : now, ...rows.map((t) => (t.completedAt ? Date.parse(t.completedAt) : now)), t0 + 1000);
    const W = 1000; const rowH = 18; const labelW = 170; const H = rows.length * rowH + 22;
    const x = (ms) => labelW + ((ms - t0) / (t1 - t0)) * (W - labelW - 10);
    gantt.setAttribute('aria-label', `Timeline of ${claimed.length} claimed tasks over ${fmtDuration(t1 - t0)}`);
    if (claimed.length > rows.length) put(gantt, h('p', { class: 'hint' }, `The latest ${rows.length} of ${claimed.length} claimed tasks.`));
    const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', class: 'gantt-svg', 'aria-hidden': 'true' });
    for (let i = 0; i <= 4; i++) {
      const tx = t0 + ((t1 - t0) * i) / 4;
      put(chart, svg('line', { x1: x(tx), x2: x(tx), y1: 0, y2: H - 16, class: 'grid' }),
        svg('text', { x: x(tx), y: H - 4, class: 'axis', 'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle' }, `+${fmtDuration(tx - t0)}`));
    }
    rows.forEach((t, i) => {
      const s = Date.parse(t.startedAt); const e = t.completedAt ? Date.parse(t.completedAt) : now;
      const y = i * rowH;
      const status = t.taskStatus === 'SKIPPED' ? 'SKIPPED' : t.status;
      put(chart, 
        svg('text', { x: 0, y: y + 13, class: 'label' }, `${icon(status)} ${t.displayId}`),
        svg('rect', { x: x(s), y: y + 3, width: Math.max(2, x(e) - x(s)), height: rowH - 6, rx: 3, class: `bar ${statusClass(status)}` },
          svg('title', {}, `${t.displayId} ${t.title}: ${status}, ${fmtDuration(e - s)}`)));
    });
    put(gantt, chart);
    // The same data as text, for screen readers.
    if (ganttText.open) {
      put(clear(ganttTable), ...claimed.map((t) => h('tr', {}, h('td', {}, t.displayId), h('td', {}, t.status), h('td', {}, fmtClock(t.startedAt)),
        h('td', {}, t.completedAt ? fmtClock(t.completedAt) : 'running'),
        h('td', {}, fmtDuration((t.completedAt ? Date.parse(t.completedAt) : now) - Date.parse(t.startedAt))))));
    }
  }

  // ---- event feed
  function describe(ev) {
    switch (ev.type) {
      case 'TASK_CLAIMED': return `claimed (wave ${ev.waveNumber}, attempt ${ev.attemptNumber})`;
      case 'TASK_STATUS_CHANGED': return `${ev.from} → ${ev.to}`;
      case 'AGENT_HEARTBEAT': return `${ev.progressPercent ?? ''}${ev.progressPercent != null ? '% ' : ''}${ev.currentStep || ''}`;
      case 'AGENT_TERMINATED': return ev.terminationReason;
      case 'LOG_APPENDED': return `${ev.lines.length} log line${ev.lines.length === 1 ? '' : 's'}`;
      case 'TEST_RESULT_RECORDED': return `${ev.level} ${ev.testName || ''}: ${ev.testStatus}`;
      case 'WAVE_STARTED': return `wave ${ev.waveNumber} started`;
      case 'WAVE_COMPLETED': return `wave ${ev.waveNumber} ${ev.waveStatus}`;
      case 'RUN_FAILED': return ev.failureReason;
      case 'QUESTION_ASKED': return ev.question.questionText;
      case 'QUESTION_ANSWERED': return `${ev.question.questionText} → ${ev.answer}${ev.byTimeout ? ' (by timeout)' : ''}`;
      case 'QUESTION_EXPIRED': return `${ev.question.questionText} (${ev.timeoutAction.replace(/_/g, ' ')})`;
      case 'QUESTION_SKIPPED': return `${ev.question.questionText}${ev.reason ? ` — ${ev.reason}` : ''}`;
      case 'SESSION_STATUS_CHANGED': return `session ${ev.sessionFrom} → ${ev.sessionTo}`;
      case 'SESSION_STATE_SAVED': return `session state v${ev.version}`;
      case 'TODO_ITEM_CHANGED': return `todo item ${ev.position}: ${ev.itemFrom} → ${ev.itemTo}`;
      case 'REACT_STEP_RECORDED': return `step ${ev.stepId}${ev.thought ? `: “${ev.thought}”` : ''}${ev.action ? ` → ${ev.action}` : ''}${ev.success === false ? ' (failed)' : ''}`;
      case 'LESSON_RECORDED': return ev.lesson ? `lesson: ${ev.lesson.lesson}` : 'lesson';
      default: return ev.reason || '';
    }
  }
  function feedItem(ev) {
    return h('li', { class: `ev ev-${ev.type.toLowerCase()}` },
      h('time', { datetime: ev.occurredAt }, fmtClock(ev.occurredAt)), ' ',
      h('span', { class: 'ev-type' }, ev.type.replace(/_/g, ' ')), ' ',
      ev.task ? h('button', { type: 'button', class: 'linkish', onclick: () => selectTask(ev.task.id) }, ev.task.displayId) : null, ' ',
      h('span', {}, describe(ev)));
  }
  function renderFeed() { put(clear(feed), ...st.feed.map(feedItem)); }

  // ---- the selected task's log, following live
  async function selectTask(tid) {
    st.selected = tid;
    updateLanes();
    const t = st.tasks.get(tid);
    logTitle.textContent = t ? `Log of ${t.displayId} ${t.title}` : 'Log';
    logHint.hidden = true;
    await loadLog();
  }
  // Only the newest read of the log may show: a task claimed again while
  // its first attempt's tail is read must not end on the older attempt.
  let logRead = 0;
  let logRetry = null;
  async function loadLog() {
    const tid = st.selected;
    const read = ++logRead;
    clearTimeout(logRetry);
    const execId = st.execByTask.get(tid);
    if (!execId) { st.log = null; put(clear(logBox), '(not claimed yet: the log starts when an agent claims the task)'); return; }
    // Lines appended while the tail is read arrive as events before its
    // answer may: they are kept and applied after it (appendLog skips what
    // the tail already had).
    const pending = { execId, events: [] };
    st.pendingLog = pending;
    let d;
    try {
      d = await query('execution_log', { id: execId, tail: LOG_TAIL });
    } catch (err) {
      // The server is away (a restart) or slow: read the tail again in a
      // while; the lines that came meanwhile are in it.
      if (read === logRead) {
        console.warn('taskgraph: reading the log failed, retrying:', err.message);
        logRetry = setTimeout(() => { if (read === logRead) loadLog(); }, 2000);
      }
      return;
    } finally {
      if (st.pendingLog === pending) st.pendingLog = null;
    }
    if (read !== logRead || st.selected !== tid) return;
    st.log = { execId, count: d.node.logLines, lines: d.node.log.slice() };
    for (const ev of pending.events) appendLog(ev);
    renderLog();
  }
  function renderLog() {
    if (!st.log) return;
    const follow = logBox.scrollTop + logBox.clientHeight >= logBox.scrollHeight - 4;
    logBox.textContent = st.log.lines.length ? st.log.lines.join('\n') : '(empty so far)';
    if (follow) logBox.scrollTop = logBox.scrollHeight;
  }
  function appendLog(ev) {
    if (st.pendingLog && ev.agent && ev.agent.execution && ev.agent.execution.id === st.pendingLog.execId) {
      st.pendingLog.events.push(ev);
      return;
    }
    if (!st.log || !ev.agent || !ev.agent.execution || ev.agent.execution.id !== st.log.execId) return;
    const first = ev.firstLine ?? st.log.count + 1;
    const skip = Math.max(0, st.log.count - first + 1); // lines already read with the tail
    const fresh = ev.lines.slice(skip);
    if (fresh.length === 0) return;
    st.log.lines.push(...fresh);
    st.log.count += fresh.length;
    if (st.log.lines.length > 2000) st.log.lines.splice(0, st.log.lines.length - 2000);
    renderLog();
  }

  // ---- live updates
  let dirty = false;
  function schedule() {
    if (dirty) return;
    dirty = true;
    requestAnimationFrame(() => { dirty = false; renderHead(); updateLanes(); renderAgents(); renderGantt(); });
  }
  // Waves, skips and finished agents settle when a task, a wave or the run
  // ends: the tree is read again then, at most once a second, and once more
  // after the last such event (so the page always ends on a read made after
  // everything it was told).
  let reloading = null;
  let again = false;
  function reloadTree() {
    if (reloading) { again = true; return; }
    again = false;
    reloading = setTimeout(async () => {
      let ok = false;
      try {
        const d = await query('run', { id, feed: 0 });
        load(d.executionRun);
        const assigned = d.executionRun.waves.reduce((n, w) => n + w.assignments.length, 0);
        if (assigned !== cards.size) buildLanes();
        schedule();
        ok = true;
      } catch (err) {
        // The server is away or slow: read again in a while (the reconnect replays the events missed).
        console.warn('taskgraph: reading the run again failed, retrying:', err.message);
      }
      reloading = null;
      if (!ok) setTimeout(reloadTree, 2000);
      else if (again) reloadTree();
    }, 1000);
  }
  // patch applies an event to the state: events carry the state of their
  // run, task and agent as of their delivery.
  function patch(ev) {
    if (ev.run) st.run = { ...st.run, ...ev.run };
    if (ev.agent) st.agents.set(ev.agent.id, ev.agent);
    const t = ev.task && st.tasks.get(ev.task.id);
    if (t) Object.assign(t, { status: ev.task.status });
    switch (ev.type) {
      case 'TASK_CLAIMED':
        if (t) { if (!t.startedAt) t.startedAt = ev.occurredAt; t.completedAt = null; }
        if (ev.agent && ev.agent.execution && ev.task) st.execByTask.set(ev.task.id, ev.agent.execution.id);
        break;
      case 'TASK_STATUS_CHANGED':
        if (t && ['COMPLETED', 'FAILED'].includes(ev.to)) t.completedAt = ev.occurredAt;
        if (t && ev.to === 'PENDING') t.completedAt = null;
        break;
      case 'WAVE_STARTED':
      case 'WAVE_COMPLETED': {
        const w = st.waves.find((x) => x.waveNumber === ev.waveNumber);
        if (w) w.status = ev.type === 'WAVE_STARTED' ? 'IN_PROGRESS' : ev.waveStatus;
        break;
      }
      default:
    }
  }
  function apply(ev) {
    patch(ev);
    switch (ev.type) {
      case 'TASK_CLAIMED':
        if (ev.agent && ev.agent.execution && ev.task && st.selected === ev.task.id) loadLog();
        break;
      case 'TASK_STATUS_CHANGED':
        // Agents that finish their task end without an event of their own.
        if (['COMPLETED', 'FAILED'].includes(ev.to)) reloadTree();
        break;
      case 'WAVE_STARTED': case 'WAVE_COMPLETED':
      case 'RUN_COMPLETED': case 'RUN_FAILED': case 'RUN_CANCELLED':
        reloadTree();
        break;
      case 'LOG_APPENDED': appendLog(ev); break;
      default:
    }
    st.feed.unshift(ev);
    if (st.feed.length > FEED_MAX) st.feed.length = FEED_MAX;
    feed.prepend(feedItem(ev));
    while (feed.childElementCount > FEED_MAX) feed.lastElementChild.remove();
    for (const p of runPanels) if (p.onEvent) p.onEvent(ev, page);
    schedule();
  }

  // ---- the connection indicator
  const conn = ctx.connBox;
  function showConn(state, detail) {
    conn.hidden = false;
    conn.dataset.state = state;
    const text = {
      connecting: '… Connecting',
      live: detail && detail.resumed ? '● Live (resumed from the last event)' : '● Live',
      reconnecting: `↻ Reconnecting${detail && detail.attempt ? ` (attempt ${detail.attempt})` : ''}… showing the last state received`,
      closed: '■ Stream ended',
      unauthorized: '⊘ Not authorised: sign in again',
    }[state] || state;
    conn.textContent = text;
  }

  const page = { get run() { return st.run; }, tasks: st.tasks, agents: st.agents, selectTask };
  for (const p of runPanels) {
    const box = h('section', { class: `panel panel-${p.id}`, 'aria-label': p.title });
    put(panels, box);
    p.mount(box, page);
  }

  ganttText.addEventListener('toggle', renderGantt);
  renderHead(); buildLanes(); renderAgents(); renderGantt(); renderFeed();
  const sub = subscribe('run_events', (after) => ({ runId: id, after }), r.events.pageInfo.endCursor, {
    cursorOf: (d) => d.runEvents.cursor,
    onEvent: (d) => apply(d.runEvents),
    onState: showConn,
    onError: (err) => { put(failure, errorBox(err)); },
  });
  const tick = setInterval(() => { if (ACTIVE.includes(st.run.status)) { renderGantt(); renderHead(); } }, 1000);
  ctx.onDispose(() => {
    sub.close(); clearInterval(tick); clearTimeout(reloading); clearTimeout(logRetry); logRead++;
    for (const p of runPanels) if (p.dispose) p.dispose();
    conn.hidden = true;
  });
}
