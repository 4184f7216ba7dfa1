// Small helpers of the inbox page (docs/inbox.md): building elements, talking to the
// daemon, formatting. Everything an upstream or a caller wrote goes into the DOM through
// el()'s textContent, attributes and text children: never parsed as HTML.

export const BASE = '/admin/inbox';

/** Builds an element. attrs: class, text, on<event>, booleans, or plain attributes; children: nodes or text. */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== undefined && child !== null && child !== false) node.append(child);
  return node;
}

let nextId = 0;
export const uid = (prefix) => `${prefix}-${++nextId}`;

export function postJson(path, body) {
  return fetch(BASE + path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The admin API's error body ({ error: { message, problems } }) as lines to show. */
export async function errorLines(res) {
  try {
    const body = await res.json();
    const problems = Array.isArray(body.error.problems) ? body.error.problems.map(String) : [];
    return problems.length > 0 ? problems : [String(body.error.message)];
  } catch {
    return [`The daemon answered ${res.status}.`];
  }
}


export function kindOf(item) {
  return item.kind === 'approval' ? 'approval' : item.mode === 'url' ? 'url' : 'form';
}

export function titleOf(item) {
  return { approval: 'Approve a tool call', url: 'Open a link', form: 'A question' }[kindOf(item)];
}

export function outcomeText(outcome, byThisPage) {
  const answered = { accept: 'accepted', decline: 'declined', cancel: 'cancelled', approve: 'approved' }[outcome];
  if (answered) return byThisPage ? `${answered}; the answer was sent.` : `${answered} elsewhere.`;
  if (outcome === 'expired') return 'expired: nobody answered in time.';
  if (outcome === 'withdrawn') return 'withdrawn: the request that asked is over.';
  if (outcome === 'stale') return 'withdrawn: the policy changed; the caller is told to call again.';
  return 'no longer pending (answered elsewhere, expired or withdrawn).';
}

/** The choices of a single- or multi-select: enum (labels from enumNames, if any) or oneOf/anyOf with const and title. */
export function choicesOf(p) {
  if (Array.isArray(p.enum)) {
    const names = Array.isArray(p.enumNames) ? p.enumNames : [];
    return p.enum.map((value, i) => ({ value: String(value), label: typeof names[i] === 'string' ? names[i] : String(value) }));
  }
  const options = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : undefined;
  if (!options) return undefined;
  return options
    .filter((o) => o && typeof o === 'object' && 'const' in o)
    .map((o) => ({ value: String(o.const), label: typeof o.title === 'string' && o.title ? o.title : String(o.const) }));
}

export function isUrl(text) {
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

export function toLocalDateTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function prettyJson(value) {
  try {
    return JSON.stringify(value, null, 2) ?? 'undefined';
  } catch {
    return String(value);
  }
}

export function formatCountdown(ms) {
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h} h ${String(m).padStart(2, '0')} min` : `${m}:${String(s).padStart(2, '0')}`;
}

/**
 * A duration in words, as libs/core's durationWords says it on the host's approval form
 * (this script cannot import it; page-durations.spec.ts holds the two to one wording): the
 * largest unit that says it exactly ("15 minutes", "1 hour"), else rounded up, never down,
 * to tenths of a second ("2.5 seconds"), or under a second to milliseconds.
 */
export function formatDuration(ms) {
  const words = (n, unit) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  const whole = Math.ceil(ms);
  if (whole < 1000) return words(whole, 'millisecond');
  const tenths = Math.ceil(whole / 100);
  const rounded = tenths * 100;
  const units = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  for (const [size, name] of units) {
    if (rounded % size === 0) return words(rounded / size, name);
  }
  return words(tenths / 10, 'second');
}
