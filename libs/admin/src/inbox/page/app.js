// The Switchboard inbox page (docs/inbox.md). Plain browser JavaScript modules, served as is
// by the daemon: no framework, no build step, nothing fetched from elsewhere (the page's CSP
// allows only this origin). Everything an upstream or a caller wrote (messages, schemas,
// URLs, arguments, principal names) reaches the page as data and is put in the DOM with
// textContent, value and setAttribute: never parsed as HTML.
import { renderCard } from './cards.js';
import { BASE, el, errorLines, formatCountdown, outcomeText, postJson, titleOf } from './dom.js';

const $ = (id) => document.getElementById(id);

if (document.body.dataset.view === 'login') setupLogin();
else setupInbox();

// ---------------------------------------------------------------- login

function setupLogin() {
  const form = $('login-form');
  const error = $('login-error');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    const token = form.elements.token.value.trim();
    let res;
    try {
      res = await postJson('/login', { token });
    } catch {
      error.textContent = 'The daemon could not be reached.';
      return;
    }
    if (res.ok) location.replace(BASE);
    else error.textContent = (await errorLines(res)).join(' ');
  });
}

// ---------------------------------------------------------------- the inbox

function setupInbox() {
  /** id -> { item, card, controls, countdown, problems, done, sending (an answer is being posted), removedAs } */
  const entries = new Map();
  let clockOffsetMs = 0;
  let source;

  const setClock = (serverNow) => {
    if (typeof serverNow === 'number') clockOffsetMs = serverNow - Date.now();
  };
  const now = () => Date.now() + clockOffsetMs;

  function setConnection(text, state) {
    const node = $('connection');
    node.textContent = text;
    node.dataset.state = state || '';
  }

  function showViewer(viewer, session) {
    if (!viewer) return;
    const who = $('who');
    who.textContent = '';
    who.append(
      'Signed in as ',
      el('strong', { text: viewer.principal }),
      viewer.admin ? ' (admin: every pending question)' : ' (the questions your own calls raised, and approvals asked of your roles)',
    );
    $('logout').hidden = !session;
  }

  function connect() {
    setConnection('Connecting…', 'pending');
    source = new EventSource(`${BASE}/events`);
    source.addEventListener('snapshot', (event) => {
      const data = JSON.parse(event.data);
      setClock(data.now);
      showViewer(data.viewer, data.session);
      reconcile(data.items);
      setConnection('Live: new questions appear as they come.', 'ok');
    });
    source.addEventListener('added', (event) => {
      const data = JSON.parse(event.data);
      setClock(data.now);
      if (!entries.has(data.item.id)) {
        add(data.item);
        notify(data.item);
      }
    });
    source.addEventListener('removed', (event) => {
      const data = JSON.parse(event.data);
      const entry = entries.get(data.id);
      // This page's own answer is on its way: the removal it caused can beat the POST's
      // response, and the card should say the answer was sent, not that someone else sent it.
      if (entry && entry.sending) entry.removedAs = data.outcome;
      else finish(data.id, data.outcome, false);
    });
    // The daemon ended this stream for good (too many open for this principal): reconnecting
    // would only end another page's, so say so and stay quiet until the user reloads.
    source.addEventListener('closed', (event) => {
      source.close();
      setConnection(`Live updates stopped: ${JSON.parse(event.data).reason}. Reload the page to follow it again.`, 'bad');
    });
    source.addEventListener('error', () => {
      if (source.readyState !== EventSource.CLOSED) {
        setConnection('Connection lost; reconnecting…', 'bad');
        return;
      }
      // Closed for good (a 401 or 404): find out which before trying again.
      setConnection('Disconnected; retrying…', 'bad');
      source.close();
      setTimeout(recheck, 3000);
    });
  }

  async function recheck() {
    try {
      const res = await fetch(`${BASE}/items`, { credentials: 'same-origin' });
      if (res.status === 401) {
        location.reload();
        return;
      }
    } catch {
      // the daemon is away: keep trying
    }
    connect();
  }

  /** A fresh snapshot (first connect, or after a reconnect): keep the cards still pending, as they may be half filled in. */
  function reconcile(items) {
    const ids = new Set(items.map((item) => item.id));
    for (const [id, entry] of entries) if (!entry.done && !ids.has(id)) finish(id, 'gone', false);
    for (const item of items) if (!entries.has(item.id)) add(item);
    refresh();
  }

  function add(item) {
    const entry = renderCard(item, { send, showProblems });
    entries.set(item.id, entry);
    // Newest last, by creation time (a reconnect's snapshot may bring an older one).
    const later = [...entries.values()].find((other) => other !== entry && !other.done && other.item.createdAt > item.createdAt);
    $('items').insertBefore(entry.card, later ? later.card : null);
    tick();
    refresh();
  }

  /** The question left the inbox: say why on its card for a few seconds, then remove the card. */
  function finish(id, outcome, byThisPage) {
    const entry = entries.get(id);
    if (!entry || entry.done) return;
    entry.done = true;
    const card = entry.card;
    card.classList.add('done');
    card.setAttribute('role', 'status');
    card.textContent = '';
    card.append(el('p', { class: 'outcome' }, el('strong', { text: titleOf(entry.item) }), ` from ${entry.item.server}: ${outcomeText(outcome, byThisPage)}`));
    setTimeout(() => {
      card.remove();
      entries.delete(id);
      refresh();
    }, 6000);
    refresh();
  }

  function refresh() {
    const pending = [...entries.values()].filter((entry) => !entry.done).length;
    $('empty').hidden = pending > 0;
    document.title = pending > 0 ? `(${pending}) Switchboard inbox` : 'Switchboard inbox';
  }

  function tick() {
    const at = now();
    for (const entry of entries.values()) {
      if (entry.done) continue;
      const left = entry.item.expiresAt - at;
      entry.countdown.textContent = left > 0 ? formatCountdown(left) : 'expired';
      entry.countdown.classList.toggle('urgent', left < 30_000);
      if (left <= 0) for (const control of entry.controls) control.disabled = true;
    }
  }

  async function send(entry, body) {
    if (entry.done) return;
    for (const control of entry.controls) control.disabled = true;
    entry.problems.textContent = '';
    let res;
    entry.sending = true;
    try {
      res = await postJson(`/items/${encodeURIComponent(entry.item.id)}/answer`, body);
    } catch {
      res = undefined;
    } finally {
      entry.sending = false;
    }
    if (res && res.status === 204) return finish(entry.item.id, body.action, true);
    if (res && res.status === 401) return location.reload();
    if (res && res.status === 404) return finish(entry.item.id, entry.removedAs ?? 'gone', false);
    if (entry.removedAs) return finish(entry.item.id, entry.removedAs, false);
    showProblems(entry, res ? await errorLines(res) : ['The daemon could not be reached; try again.']);
    for (const control of entry.controls) control.disabled = false;
    tick();
  }

  function showProblems(entry, lines) {
    entry.problems.textContent = '';
    for (const line of lines) entry.problems.append(el('li', { text: line }));
  }

  // ------------------------------------------------------------ notifications

  function setupNotifications() {
    const button = $('notify');
    if (!('Notification' in window)) return;
    const update = () => {
      button.hidden = Notification.permission !== 'default';
    };
    update();
    button.addEventListener('click', async () => {
      try {
        await Notification.requestPermission();
      } finally {
        update();
      }
    });
  }

  /** A desktop notification for a new question, only while the page is not being looked at. */
  function notify(item) {
    if (!('Notification' in window) || Notification.permission !== 'granted' || !document.hidden) return;
    const text = item.kind === 'approval' ? `${item.tool} needs approval` : String(item.message || '');
    const notification = new Notification(`Switchboard: ${titleOf(item)}`, { body: `${item.server}: ${text}`.slice(0, 200), tag: item.id });
    notification.addEventListener('click', () => {
      window.focus();
      notification.close();
    });
  }

  $('logout').addEventListener('click', async () => {
    try {
      await postJson('/logout', {});
    } finally {
      location.reload();
    }
  });
  setupNotifications();
  setInterval(tick, 1000);
  refresh();
  connect();
}
