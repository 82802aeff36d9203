// Small DOM helpers: elements are built with h(), never from HTML strings, so
// text from the API is always text.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

// put appends children to el, skipping null, undefined and false (which the
// DOM's own append would write as text).
export function put(el, ...children) { append(el, children); return el; }

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// svg builds an SVG element (the Gantt chart).
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }

// Status badges: a colour, an icon and the status word, so colour is never
// the only signal.
const ICONS = {
  DRAFT: '✎', EVALUATING: '?', PENDING: '○', BLOCKED: '⊘', IN_PROGRESS: '▶', VALIDATING: '◐',
  COMPLETED: '✓', FAILED: '✗', SKIPPED: '↷', RUNNING: '▶', PAUSED: '❚❚', CANCELLED: '■',
  READY: '○', ARCHIVED: '▣', ACTIVE: '●', SPAWNING: '…', IDLE: '○', COMPLETING: '◐', TERMINATED: '■',
  INTERRUPTED: '⚡', PASSED: '✓', ERROR: '!', ABANDONED: '⊗',
};

export function statusClass(s) { return `st-${String(s || 'unknown').toLowerCase()}`; }

export function badge(status, extra) {
  const s = status || 'UNKNOWN';
  return h('span', { class: `badge ${statusClass(s)}${extra ? ' ' + extra : ''}` },
    h('span', { class: 'icon', 'aria-hidden': 'true' }, ICONS[s] || '•'), ' ', s.replace(/_/g, ' '));
}

export function icon(status) { return ICONS[status] || '•'; }

export function link(href, ...children) { return h('a', { href }, ...children); }

export function fmtTime(t) {
  if (!t) return '—';
  const d = new Date(t);
  return d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function fmtClock(t) {
  if (!t) return '—';
  return new Date(t).toLocaleTimeString(undefined, { hour12: false });
}

export function fmtDuration(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function errorBox(err) {
  return h('div', { class: 'error', role: 'alert' }, h('strong', {}, 'Error: '), err.message || String(err));
}

export function field(label, control) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control);
}

export function select(name, options, value) {
  return h('select', { name },
    options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)));
}
