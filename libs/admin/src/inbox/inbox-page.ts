import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';

/**
 * The page's script and style sheet are plain files beside this module's source. The path
 * climbs to the lib's root and back into src/, so it is the same from src/inbox/ (vitest)
 * and from dist/inbox/ (the daemon): tsc copies no assets, and nothing else needs to.
 */
const PAGE_DIR = new URL('../../src/inbox/page/', import.meta.url);

const SCRIPT = 'text/javascript; charset=utf-8';
/** The page's files, served at /admin/inbox/<name>: a style sheet and four small ES modules. */
export const ASSETS = {
  'app.css': 'text/css; charset=utf-8',
  'app.js': SCRIPT,
  'cards.js': SCRIPT,
  'form.js': SCRIPT,
  'dom.js': SCRIPT,
} as const;
export type AssetName = keyof typeof ASSETS;

const cache = new Map<AssetName, Buffer>();

export const isAssetName = (name: string): name is AssetName => Object.hasOwn(ASSETS, name);

export function sendAsset(res: ServerResponse, name: AssetName): void {
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(new URL(name, PAGE_DIR));
    cache.set(name, body);
  }
  res.writeHead(200, { 'Content-Type': ASSETS[name], 'Content-Length': body.length, ...SECURITY_HEADERS }).end(body);
}

/**
 * Everything the page runs and styles comes from this daemon, and nothing else may: no inline
 * script (an upstream's text that slipped into the markup could not run), no framing
 * (clickjacking an Approve button), no referrer (the URL of a url-mode question stays here).
 */
export const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
} as const;

export function sendHtml(res: ServerResponse, html: string): void {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ...SECURITY_HEADERS }).end(html);
}

// The markup holds no data: the script fills it from /admin/inbox/events with DOM calls and
// textContent, so nothing an upstream wrote is ever parsed as HTML.
const head = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Switchboard inbox</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/admin/inbox/app.css">
<script type="module" src="/admin/inbox/app.js"></script>
</head>`;

const noscript = '<noscript><p class="banner">This page needs JavaScript. Its script is served by the daemon itself; nothing is loaded from elsewhere.</p></noscript>';

export const INBOX_HTML = `${head}
<body data-view="inbox">
<header class="top">
  <h1>Switchboard inbox</h1>
  <p class="who" id="who"></p>
  <div class="top-actions">
    <button type="button" id="notify" class="secondary" hidden>Enable desktop notifications</button>
    <button type="button" id="logout" class="secondary" hidden>Sign out</button>
  </div>
</header>
${noscript}
<p id="connection" class="connection" role="status" aria-live="polite">Connecting…</p>
<div id="notices" class="notices" aria-live="polite"></div>
<main id="items" class="items" aria-label="Pending questions"></main>
<p id="empty" class="empty" hidden>Nothing is waiting for an answer. New questions appear here as they come.</p>
</body>
</html>
`;

export const LOGIN_HTML = `${head}
<body data-view="login">
<main class="login">
  <h1>Switchboard inbox</h1>
  <p>This daemon requires a credential. Sign in with an API key (<code>switchboard keys create</code>) or a
  JWT from your identity provider: you will see the questions your own calls raised, approvals asked of your roles, and everyone's with the
  <code>admin</code> role. The browser keeps only a session cookie, for 8 hours or until you sign out.</p>
  ${noscript}
  <form id="login-form" method="post" action="/admin/inbox/login">
    <label for="token">API key or token</label>
    <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required>
    <button type="submit">Sign in</button>
    <p id="login-error" class="problems" role="alert"></p>
  </form>
</main>
</body>
</html>
`;
