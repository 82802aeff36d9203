// A task list: its wave plan (a dry run of how its unfinished tasks would
// run) drawn as waves, the conflicts that keep tasks apart, and its runs.
import { query } from './gql.js';
import { h, put, badge, link, fmtTime, fmtDuration, errorBox } from './dom.js';

const CONFLICT_LABEL = { DEPENDENCY: 'waits on', FILE_CONFLICT: 'same file as', RESOURCE_CONFLICT: 'conflicts with' };

export async function taskListPage(ctx, id) {
  const data = await query('tasklist', { id });
  const l = data.taskList;
  if (!l) { put(ctx.main, h('h1', {}, 'Task list not found')); return; }
  const plan = data.wavePlan;
  ctx.setTitle(l.name);

  // Conflicts by task id, both ways.
  const conflicts = new Map();
  const add = (a, b, c) => { if (!conflicts.has(a.id)) conflicts.set(a.id, []); conflicts.get(a.id).push({ other: b, c }); };
  for (const c of plan.conflicts) { add(c.taskA, c.taskB, c); add(c.taskB, c.taskA, c); }
  const critical = new Set(plan.criticalPath.tasks.map((t) => t.id));

  const cards = new Map();
  const highlight = (taskId, on) => {
    for (const { other } of conflicts.get(taskId) || []) {
      const el = cards.get(other.id);
      if (el) el.classList.toggle('conflict-hl', on);
    }
  };
  const waves = h('div', { class: 'plan', role: 'list', 'aria-label': 'Waves of the plan' },
    plan.waves.map((w) => h('section', { class: 'plan-wave', role: 'listitem', 'aria-labelledby': `pw-${w.number}` },
      h('h3', { id: `pw-${w.number}` }, `Wave ${w.number}`, h('span', { class: 'hint' }, ` · ${w.tasks.length} task${w.tasks.length === 1 ? '' : 's'}`)),
      h('ul', { class: 'plan-tasks' }, w.tasks.map((t) => {
        const cs = conflicts.get(t.id) || [];
        const el = h('li', {
          class: `plan-task${cs.length ? ' has-conflicts' : ''}${critical.has(t.id) ? ' critical' : ''}`,
          tabindex: 0, dataset: { task: t.displayId },
          onmouseenter: () => highlight(t.id, true), onmouseleave: () => highlight(t.id, false),
          onfocus: () => highlight(t.id, true), onblur: () => highlight(t.id, false),
        },
        h('div', {}, link(`#/t/${encodeURIComponent(t.id)}`, t.displayId), ' ', badge(t.status, 'small')),
        h('div', { class: 'title' }, t.title),
        h('div', { class: 'hint' }, `score ${t.priorityScore}${t.effort ? ' · ' + t.effort : ''}`),
        critical.has(t.id) ? h('div', { class: 'tag critical-tag' }, '★ critical path') : null,
        cs.length ? h('ul', { class: 'conflict-list', 'aria-label': `Conflicts of ${t.displayId}` }, cs.map(({ other, c }) =>
          h('li', {}, h('span', { 'aria-hidden': 'true' }, '⚡ '), `${CONFLICT_LABEL[c.type] || c.type} ${other.displayId}`,
            c.filePath ? [' (', h('code', {}, c.filePath), ')'] : null))) : null);
        cards.set(t.id, el);
        return el;
      })))));

  const runsTable = l.runs.length === 0 ? h('p', { class: 'hint' }, 'No run yet.') :
    h('table', {}, h('thead', {}, h('tr', {}, ['Run', 'Status', 'Trigger', 'Tasks', 'Waves', 'Started', 'Duration'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, l.runs.map((r) => h('tr', {},
        h('td', {}, link(`#/r/${encodeURIComponent(r.id)}`, `Run #${r.runNumber}`)),
        h('td', {}, badge(r.status)),
        h('td', {}, r.triggeredBy),
        h('td', {}, `${r.tasksCompleted}/${r.tasksTotal} done`, r.tasksFailed ? `, ${r.tasksFailed} failed` : '', r.tasksSkipped ? `, ${r.tasksSkipped} skipped` : ''),
        h('td', {}, `${r.wavesCompleted}/${r.wavesTotal}`),
        h('td', {}, fmtTime(r.startedAt)),
        h('td', {}, fmtDuration(r.durationMs))))));

  const startStatus = h('div', { role: 'status' });
  const active = l.runs.some((r) => ['PENDING', 'RUNNING', 'PAUSED'].includes(r.status));
  const startBtn = h('button', {
    type: 'button', disabled: active || plan.totalTasks === 0,
    onclick: async () => {
      startBtn.disabled = true;
      try {
        const d = await query('start_run', { in: { taskListId: l.id, reason: 'started from the dashboard' } });
        ctx.go(`#/r/${encodeURIComponent(d.startExecutionRun.run.id)}`);
      } catch (err) { startStatus.replaceChildren(errorBox(err)); startBtn.disabled = false; }
    },
  }, 'Start a run of this plan');

  put(ctx.main, 
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, link('#/', 'Projects'), ' / ',
      link(`#/p/${encodeURIComponent(l.project.slug)}`, l.project.name), ' / ', l.name),
    h('h1', {}, l.name, ' ', badge(l.status)),
    l.description ? h('p', {}, l.description) : null,
    h('p', {}, `${l.completedTasks} of ${l.totalTasks} tasks completed`, l.failedTasks ? `, ${l.failedTasks} failed` : '',
      ` · up to ${l.maxParallelAgents} agents at once · `, link(`#/p/${encodeURIComponent(l.project.slug)}?list=${encodeURIComponent(l.id)}`, 'its tasks')),
    h('p', { class: 'hint' }, `Status ${l.status.replace(/_/g, ' ')}`,
      l.startedAt ? ` · started ${fmtTime(l.startedAt)}` : '', l.completedAt ? ` · completed ${fmtTime(l.completedAt)}` : '',
      l.autoExecute ? ' · runs by itself when READY' : '',
      l.runSchedule ? [' · schedule ', h('code', {}, l.runSchedule), ' (UTC)', l.nextScheduledRunAt ? `, next ${fmtTime(l.nextScheduledRunAt)}` : ''] : null),
    h('section', { 'aria-labelledby': 'runs-h' }, h('h2', { id: 'runs-h' }, 'Runs'), runsTable, h('p', {}, startBtn, active ? h('span', { class: 'hint' }, ' (a run is active)') : null), startStatus),
    h('section', { 'aria-labelledby': 'plan-h' },
      h('h2', { id: 'plan-h' }, 'Wave plan'),
      h('p', { class: 'hint' }, `${plan.totalTasks} unfinished task${plan.totalTasks === 1 ? '' : 's'} in ${plan.waves.length} wave${plan.waves.length === 1 ? '' : 's'}, about ${plan.estimatedHours} effort hours; `,
        `critical path ${plan.criticalPath.tasks.map((t) => t.displayId).join(' → ') || '—'} (${plan.criticalPath.estimatedHours} h). `,
        'Tasks marked ⚡ may not share a wave with the tasks named; hover or focus a task to outline them.'),
      plan.waves.length ? waves : h('p', { class: 'hint' }, 'Nothing left to plan.'),
      plan.conflicts.length ? [h('h3', {}, `Conflicts (${plan.conflicts.length})`),
        h('table', {}, h('thead', {}, h('tr', {}, ['Task A', 'Task B', 'Kind', 'File', 'Operations'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, plan.conflicts.map((c) => h('tr', {},
            h('td', {}, link(`#/t/${encodeURIComponent(c.taskA.id)}`, c.taskA.displayId)),
            h('td', {}, link(`#/t/${encodeURIComponent(c.taskB.id)}`, c.taskB.displayId)),
            h('td', {}, c.type.replace(/_/g, ' ')), h('td', {}, c.filePath ? h('code', {}, c.filePath) : '—'),
            h('td', {}, c.operations.join(' / ') || '—')))))] : null,
      plan.unplannable.length ? [h('h3', {}, `Left out of the plan (${plan.unplannable.length})`),
        h('ul', {}, plan.unplannable.map((u) => h('li', {}, link(`#/t/${encodeURIComponent(u.task.id)}`, u.task.displayId), ` ${u.task.title}: ${u.reason}`)))] : null),
  );
}
