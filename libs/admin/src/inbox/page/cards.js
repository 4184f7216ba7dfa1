// The cards of the inbox page: a form elicitation, a URL elicitation, an approval.
import { el, uid, kindOf, titleOf, prettyJson, formatDuration } from './dom.js';
import { renderField } from './form.js';


/**
 * The card of one pending question. `actions.send(entry, answer)` posts an answer and
 * `actions.showProblems(entry, lines)` shows why one was refused.
 */
export function renderCard(item, actions) {
  const titleId = uid('title');
  const countdown = el('span', { class: 'countdown' });
  const entry = { item, card: null, controls: [], countdown, problems: el('ul', { class: 'problems', role: 'alert' }), done: false, actions };
  const meta = el(
    'dl',
    { class: 'meta' },
    el('dt', { text: 'Server' }),
    el('dd', {}, el('code', { text: item.server })),
    el('dt', { text: 'For' }),
    el('dd', { text: item.principal === null ? 'unknown caller (shown to admins only)' : item.principal }),
    el('dt', { text: 'Expires in' }),
    el('dd', {}, countdown),
  );
  const card = el(
    'article',
    { class: `card kind-${kindOf(item)}`, 'aria-labelledby': titleId, 'data-id': item.id, 'data-kind': kindOf(item) },
    el('header', {}, el('h2', { id: titleId, text: titleOf(item) }), meta),
  );
  entry.card = card;
  if (item.kind === 'approval') renderApproval(entry);
  else if (item.mode === 'url') renderUrl(entry);
  else renderForm(entry);
  card.append(entry.problems);
  return entry;
}

function buttons(entry, specs) {
  const row = el('div', { class: 'buttons' });
  for (const spec of specs) {
    const button = el('button', { type: spec.submit ? 'submit' : 'button', class: spec.primary ? 'primary' : 'secondary', text: spec.label });
    if (spec.onclick) button.addEventListener('click', spec.onclick);
    entry.controls.push(button);
    row.append(button);
  }
  return row;
}

function renderApproval(entry) {
  const { item } = entry;
  entry.card.append(
    el('p', { class: 'message' }, 'A policy rule asks a person to approve this tool call before it runs.'),
    el(
      'dl',
      { class: 'details' },
      el('dt', { text: 'Tool' }),
      el('dd', {}, el('code', { text: item.tool })),
      el('dt', { text: 'Rule' }),
      el('dd', {}, el('code', { text: item.rule })),
    ),
    el('p', { class: 'label', text: 'Arguments' }),
    el('pre', { class: 'arguments', text: prettyJson(item.arguments) }),
  );
  if (item.argumentsRedacted) {
    // A redacted value can hide anything, a command appended to a password included.
    entry.card.append(
      el('p', {
        class: 'warning',
        text: 'Parts of these arguments look like secrets and are hidden ([REDACTED]). A hidden part can hold anything; approve only if you know what the caller sent there.',
      }),
    );
  }
  if (Array.isArray(item.approvers)) {
    entry.card.append(el('dl', { class: 'details' }, el('dt', { text: 'Approved by' }), el('dd', { text: `someone with ${roleWords(item.approvers)}, not the caller` })));
  }
  if (item.answerable === false) {
    // The caller's own call, which someone else must approve: shown so that they know why it waits.
    entry.card.append(el('p', { class: 'waiting', role: 'status', text: 'Waiting for an approver. This is your own call, so you cannot approve or decline it here.' }));
    return;
  }
  let remember;
  const choices = Array.isArray(item.rememberChoicesMs) ? item.rememberChoicesMs : [];
  if (choices.length > 0) {
    const id = uid('remember');
    remember = el('select', { id }, el('option', { value: '0', text: "Don't remember: ask again next time" }));
    for (const ms of choices) remember.append(el('option', { value: String(ms), text: `Remember for ${formatDuration(ms)}` }));
    entry.controls.push(remember);
    entry.card.append(el('div', { class: 'field' }, el('label', { for: id, text: 'Same call again' }), remember));
  }
  entry.card.append(
    buttons(entry, [
      {
        label: 'Approve',
        primary: true,
        onclick: () => {
          const ms = remember ? Number(remember.value) : 0;
          entry.actions.send(entry, ms > 0 ? { action: 'approve', rememberForMs: ms } : { action: 'approve' });
        },
      },
      { label: 'Decline', onclick: () => entry.actions.send(entry, { action: 'decline' }) },
    ]),
  );
}

/** `role lead`, `roles lead or ops` (as the daemon's messages say it). */
function roleWords(roles) {
  return roles.length === 1 ? `role ${roles[0]}` : `roles ${roles.slice(0, -1).join(', ')} or ${roles.at(-1)}`;
}

function renderUrl(entry) {
  const { item } = entry;
  let url;
  try {
    url = new URL(item.url);
  } catch {
    url = undefined;
  }
  const openable = url !== undefined && (url.protocol === 'https:' || url.protocol === 'http:');
  entry.card.append(el('p', { class: 'message', text: item.message }), el('p', { class: 'label', text: 'It asks you to open this address:' }));
  // The whole URL, and its host on its own line: what a user must check before trusting a link.
  entry.card.append(el('p', { class: 'url' }, el('code', { text: url ? url.href : String(item.url) })));
  if (url) entry.card.append(el('p', { class: 'host' }, 'Host: ', el('strong', { text: url.host || '(none)' })));
  if (!openable) entry.card.append(el('p', { class: 'warning', text: 'Only http and https addresses can be opened from this page.' }));
  const open = el('button', { type: 'button', class: 'secondary', text: 'Open', disabled: !openable });
  open.addEventListener('click', () => {
    if (openable) window.open(url.href, '_blank', 'noopener,noreferrer');
  });
  entry.controls.push(open);
  entry.card.append(
    el('div', { class: 'buttons' }, open),
    buttons(entry, [
      { label: 'I have completed it', primary: true, onclick: () => entry.actions.send(entry, { action: 'accept' }) },
      { label: 'Decline', onclick: () => entry.actions.send(entry, { action: 'decline' }) },
      { label: 'Cancel', onclick: () => entry.actions.send(entry, { action: 'cancel' }) },
    ]),
  );
}

function renderForm(entry) {
  const { item } = entry;
  const schema = item.requestedSchema && typeof item.requestedSchema === 'object' ? item.requestedSchema : {};
  const properties = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  // The browser's own bubbles are off: every problem is shown beside its field instead.
  const form = el('form', { class: 'answer-form', novalidate: true });
  const fields = Object.entries(properties).map(([name, property]) => renderField(name, property, required.has(name)));
  for (const field of fields) {
    form.append(field.node);
    entry.controls.push(...field.controls);
  }
  form.append(
    buttons(entry, [
      { label: 'Submit', primary: true, submit: true },
      { label: 'Decline', onclick: () => entry.actions.send(entry, { action: 'decline' }) },
      { label: 'Cancel', onclick: () => entry.actions.send(entry, { action: 'cancel' }) },
    ]),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    let firstBad;
    const content = {};
    for (const field of fields) {
      const problem = field.check();
      field.showProblem(problem);
      if (problem && !firstBad) firstBad = field;
      if (!problem) {
        const value = field.read();
        if (value !== undefined) content[field.name] = value;
      }
    }
    if (firstBad) {
      entry.actions.showProblems(entry, ['Please correct the fields marked above.']);
      firstBad.controls[0].focus();
      return;
    }
    entry.actions.send(entry, { action: 'accept', content });
  });
  entry.card.append(el('p', { class: 'message', text: item.message }), form);
}
