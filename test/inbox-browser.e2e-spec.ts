import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './support/browser.js';
import { EVERYTHING_SERVER, REPO_ROOT, eventually, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { createKey } from './support/cli.js';
import { inboxItems } from './support/inbox-client.js';
import { openStream, type OpenStream } from './support/sse-client.js';

/**
 * The inbox page in a real browser (headless Debian Chromium driven by playwright-core): the
 * real daemon with auth required, server-everything as the upstream, and a host that cannot
 * show forms, so its elicitations and approvals wait in the inbox. A person signs in with
 * their key, fills in the form and approves the call, and the upstream gets the answers.
 *
 * With INBOX_SCREENSHOT=<file> (scripts/inbox-screenshot.mjs sets it) the test with one
 * pending form and one pending approval also saves a screenshot of the page there.
 */

type ToolResult = { content: { type: string; text?: string }[] };
const textOf = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');
const FORM_TOOL = 'everything__trigger-elicitation-request';
const URL_TOOL = 'everything__trigger-url-elicitation';
const ECHO_TOOL = 'everything__echo';
const SUM_TOOL = 'everything__get-sum';
/** The SDK's own request timeout is 60 s; a person in a browser on two busy cores may take longer. */
const CALL_OPTIONS = { timeout: 180_000 };
/** expect.poll gives up after 1 s by default: too soon for a browser on two busy cores. */
const POLL = { timeout: 30_000 };

const POLICY = `defaultEffect: allow
everyone: [ops]
roles:
  ops:
    - { id: ask-before-echo, confirm: call, tool: "${ECHO_TOOL}" }
    - { id: lead-approves-sums, confirm: call, tool: "${SUM_TOOL}", approvers: [lead] }
  lead: []
`;

afterAll(stopAllDaemons);

describe('the inbox page in headless Chromium', { timeout: 180_000 }, () => {
  let daemon: DaemonHandle;
  let host: Client;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let key: string;
  let leadKey: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const dir = tempDir();
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, POLICY);
    const configPath = writeConfig(
      {
        auth: { mode: 'required' },
        policy: { file: policyFile },
        relay: { timeoutMs: 170_000 },
        approvals: { timeoutMs: 170_000, rememberMs: [900_000, 3_600_000] },
        mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] } },
      },
      dir,
    );
    key = createKey(configPath, 'dana', 'dev');
    leadKey = createKey(configPath, 'lena', 'lead');

    [daemon, browser] = await Promise.all([startDaemon(configPath), launchChromium()]);
    // A host that declares no elicitation: whatever the upstream asks goes to the inbox.
    host = new Client({ name: 'no-forms-host', version: '1.0.0' }, { capabilities: {} });
    await host.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    await eventually(async () => (await host.listTools()).tools.some((t) => t.name === FORM_TOOL), 30_000, 'the upstream tools');

    context = await browser.newContext({ viewport: { width: 1100, height: 900 }, colorScheme: 'light' });
    // Nothing leaves the machine: a link the page opens gets a stub page.
    await context.route(/^https:\/\/login\.example\.org\//, (route) => route.fulfill({ contentType: 'text/html', body: '<title>stub</title>' }));
    context.setDefaultTimeout(60_000);
    page = await context.newPage();
    page.on('console', (m) => m.type() === 'error' && pageErrors.push(m.text()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 120_000);

  afterAll(async () => {
    await host?.close().catch(() => undefined);
    await browser?.close();
  });

  const auth = () => ({ Authorization: `Bearer ${key}` });
  const card = (kind: string) => page.locator(`article.card[data-kind="${kind}"]:not(.done)`);

  it('shows the login form, and signs in with a key to an HttpOnly, SameSite=Strict cookie', async () => {
    const response = await page.goto(`${daemon.baseUrl}/admin/inbox`);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByLabel('API key or token').fill('sbk_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#login-error').textContent(), POLL).toMatch(/sign-in refused/);
    // Chromium logs the refused sign-in's 401 as a console error: that one was asked for.
    pageErrors.length = 0;

    await page.getByLabel('API key or token').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who strong').waitFor();
    expect(await page.locator('#who').textContent()).toBe('Signed in as dana (the questions your own calls raised, and approvals asked of your roles)');
    await expect.poll(() => page.locator('#connection').getAttribute('data-state'), POLL).toBe('ok');
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'switchboard_inbox', path: '/admin/inbox', httpOnly: true, sameSite: 'Strict' });
    expect(await page.locator('#empty').isVisible()).toBe(true);
  });

  it('answers a form elicitation: defaults pre-filled, checked in the page, relayed to the upstream', async () => {
    const call = host.callTool({ name: FORM_TOOL, arguments: {} }, CALL_OPTIONS).then(textOf);
    const form = card('form');
    await form.waitFor();
    expect(await form.locator('.message').textContent()).toBe('Please provide inputs for the following fields:');
    expect(await form.locator('.meta').textContent()).toContain('everything');
    expect(await form.locator('.meta').textContent()).toContain('dana');
    await expect.poll(() => form.locator('.countdown').textContent(), POLL).toMatch(/^\d+:\d{2}$/);

    const field = (name: string) => form.locator(`[data-field="${name}"]`);
    expect(await field('firstLine').locator('input').inputValue()).toBe('It was a dark and stormy night.');
    expect(await field('integer').locator('input').inputValue()).toBe('42');
    expect(await field('untitledSingleSelectEnum').locator('select').inputValue()).toBe('Monica');
    expect(await field('legacyTitledEnum').locator('option[value="pet-2"]').textContent()).toBe('Dogs');
    expect(await field('titledMultipleSelectEnum').getByLabel('Tuna').isChecked()).toBe(true);
    expect(await field('name').locator('.required').count()).toBe(1);
    expect(await form.textContent()).not.toMatch(/\bnull\b|\bundefined\b|\[object /);

    // The required name is empty and the integer out of range: the page says so and sends nothing.
    await field('integer').locator('input').fill('500');
    await form.getByRole('button', { name: 'Submit' }).click();
    expect(await field('name').locator('.field-error').textContent()).not.toBe('');
    expect(await field('integer').locator('.field-error').textContent()).not.toBe('');
    expect((await inboxItems(daemon, auth())).filter((i) => i.kind === 'elicitation')).toHaveLength(1);

    await field('name').locator('input').fill('Dana Browser');
    await field('email').locator('input').fill('dana@example.com');
    await field('integer').locator('input').fill('7');
    await field('check').locator('input').check();
    await field('birthdate').locator('input').fill('1990-04-01');
    await field('titledSingleSelectEnum').locator('select').selectOption({ label: 'Wonder Woman' });
    await field('untitledMultipleSelectEnum').getByLabel('Piano').check();
    await form.getByRole('button', { name: 'Submit' }).click();

    const text = await call;
    expect(text).toContain('Name: Dana Browser');
    expect(text).toContain('Email: dana@example.com');
    expect(text).toContain('Favorite Integer: 7');
    expect(text).toContain('Agreed to terms: true');
    const raw = JSON.parse(text.slice(text.indexOf('Raw result:') + 'Raw result:'.length));
    expect(raw).toMatchObject({
      action: 'accept',
      content: {
        firstLine: 'It was a dark and stormy night.',
        number: 3.14,
        birthdate: '1990-04-01',
        titledSingleSelectEnum: 'hero-3',
        untitledMultipleSelectEnum: ['Guitar', 'Piano'],
        titledMultipleSelectEnum: ['fish-1'],
      },
    });
    await page.locator('article.card.done', { hasText: 'accepted; the answer was sent.' }).waitFor();
  });

  it('approves a call a confirm rule holds, and the call runs', async () => {
    const call = host.callTool({ name: ECHO_TOOL, arguments: { message: 'hello from the inbox' } }, CALL_OPTIONS).then(textOf);
    const approval = card('approval');
    await approval.waitFor();
    expect(await approval.locator('.details').textContent()).toContain(ECHO_TOOL);
    expect(await approval.locator('.details').textContent()).toContain('ask-before-echo');
    expect(JSON.parse((await approval.locator('pre.arguments').textContent())!)).toEqual({ message: 'hello from the inbox' });
    const remember = approval.getByLabel('Same call again');
    expect(await remember.locator('option').allTextContents()).toEqual([
      "Don't remember: ask again next time",
      'Remember for 15 minutes',
      'Remember for 1 hour',
    ]);
    await approval.getByRole('button', { name: 'Approve' }).click();
    expect(await call).toBe('Echo: hello from the inbox');
  });

  it("shows the caller's own call that someone else must approve as waiting, with nothing to press, until an approver answers", async () => {
    const call = host.callTool({ name: SUM_TOOL, arguments: { a: 2, b: 3 } }, CALL_OPTIONS).then(textOf);
    const approval = card('approval');
    await approval.waitFor();
    expect(await approval.locator('.details').last().textContent()).toContain('someone with role lead, not the caller');
    expect(await approval.locator('.waiting').textContent()).toContain('This is your own call');
    expect(await approval.getByRole('button').count()).toBe(0);
    const [item] = (await inboxItems(daemon, { Authorization: `Bearer ${leadKey}` })).filter((i) => i.tool === SUM_TOOL);
    const answered = await fetch(`${daemon.baseUrl}/admin/inbox/items/${item.id}/answer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', Authorization: `Bearer ${leadKey}` },
      body: JSON.stringify({ action: 'approve' }),
    });
    expect(answered.status).toBe(204);
    expect(await call).toContain('5');
    await expect.poll(() => card('approval').count(), POLL).toBe(0);
  });

  it('shows a URL question with its host, opens it only on a click and without an opener, and drops a withdrawn one', async () => {
    // A host that takes forms only: a url-mode question goes to the inbox.
    const formsOnly = new Client({ name: 'forms-only-host', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    formsOnly.setRequestHandler('elicitation/create', async () => ({ action: 'cancel' }));
    await formsOnly.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: auth() } }));
    try {
      await eventually(async () => (await formsOnly.listTools()).tools.some((t) => t.name === URL_TOOL), 30_000, 'the url tool');
      const url = 'https://login.example.org/device?code=XYZ';
      const call = formsOnly.callTool({ name: URL_TOOL, arguments: { url, message: 'Link your account' } }, CALL_OPTIONS).then(textOf);
      const question = card('url');
      await question.waitFor();
      expect(await question.locator('.url code').textContent()).toBe(url);
      expect(await question.locator('.host strong').textContent()).toBe('login.example.org');
      expect(await question.textContent()).not.toMatch(/\bnull\b|\bundefined\b|\[object /);
      expect(context.pages()).toHaveLength(1);
      const [popup] = await Promise.all([context.waitForEvent('page'), question.getByRole('button', { name: 'Open' }).click()]);
      await popup.waitForLoadState();
      expect(popup.url()).toBe(url);
      expect(await popup.evaluate(() => (globalThis as { opener?: unknown }).opener)).toBeNull();
      await popup.close();
      await question.getByRole('button', { name: 'I have completed it' }).click();
      expect(await call).toContain('completed the URL elicitation flow');
      // The page learns of the answer by its event stream, which may come after the call's
      // answer: until it does, card('url') would still find this question.
      await question.waitFor({ state: 'detached' });

      // Upstream text is text (a javascript: URL never gets this far: the relay refuses
      // anything but http(s), relay-inbox.e2e-spec.ts). Then the host gives up on its call:
      // the question leaves the page, which says why.
      const hostile = `<img src=x onerror="document.title='pwned'"><b>bold?</b>`;
      const abort = new AbortController();
      const abandoned = formsOnly
        .callTool({ name: URL_TOOL, arguments: { url: 'https://consent.example/next', message: hostile } }, { ...CALL_OPTIONS, signal: abort.signal })
        .catch(() => 'cancelled');
      const trap = card('url');
      await trap.waitFor();
      expect(await trap.locator('.message').textContent()).toBe(hostile);
      expect(await trap.locator('img, b').count()).toBe(0);
      expect(await page.title()).not.toContain('pwned');
      abort.abort();
      expect(await abandoned).toBe('cancelled');
      await page.locator('article.card.done', { hasText: 'withdrawn' }).waitFor();
    } finally {
      await formsOnly.close().catch(() => undefined);
    }
  });

  it('raises a desktop notification for a new question while the page is hidden', async () => {
    const watcher = await context.newPage();
    try {
      // A hidden tab whose notifications were allowed; the Notification constructor records what it is given.
      await watcher.addInitScript(`
        Object.defineProperty(Document.prototype, 'hidden', { get: () => true });
        window.shown = [];
        window.Notification = class {
          static permission = 'granted';
          static requestPermission() { return Promise.resolve('granted'); }
          constructor(title, options) { window.shown.push({ title, body: options.body, tag: options.tag }); }
          addEventListener() {}
          close() {}
        };
      `);
      await watcher.goto(`${daemon.baseUrl}/admin/inbox`);
      await watcher.locator('#connection[data-state="ok"]').waitFor();
      const call = host.callTool({ name: ECHO_TOOL, arguments: { message: 'notify me' } }, CALL_OPTIONS).then(textOf, (e: Error) => e.message);
      const shown = await eventually(async () => {
        const list = (await watcher.evaluate('window.shown')) as { title: string; body: string; tag: string }[];
        return list.length > 0 ? list : undefined;
      }, 30_000, 'a notification');
      const [item] = (await inboxItems(daemon, auth())).filter((i) => i.kind === 'approval');
      expect(shown).toEqual([{ title: 'Switchboard: Approve a tool call', body: `everything: ${ECHO_TOOL} needs approval`, tag: item.id }]);
      await watcher.locator(`article[data-id="${item.id}"]`).getByRole('button', { name: 'Decline' }).click();
      expect(await call).toMatch(/declined by dana/);
    } finally {
      await watcher.close();
    }
  });

  it('lists a form and an approval at once, newest last (the README screenshot)', async () => {
    await eventually(async () => (await inboxItems(daemon, auth())).length === 0, 15_000, 'an empty inbox');
    await eventually(async () => (await page.locator('article.card').count()) === 0, 15_000, 'the page to clear');
    const form = host.callTool({ name: FORM_TOOL, arguments: {} }, CALL_OPTIONS).then(textOf);
    await card('form').waitFor();
    const echo = host.callTool({ name: ECHO_TOOL, arguments: { message: 'deploy to staging' } }, CALL_OPTIONS).then(textOf, (e: Error) => e.message);
    await card('approval').waitFor();
    expect(await page.locator('article.card').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-kind')))).toEqual(['form', 'approval']);
    expect(await page.title()).toBe('(2) Switchboard inbox');

    const target = process.env.INBOX_SCREENSHOT;
    if (target) {
      const file = resolve(REPO_ROOT, target);
      mkdirSync(dirname(file), { recursive: true });
      await page.locator('#connection[data-state="ok"]').waitFor();
      await page.screenshot({ path: file, fullPage: true });
    }

    await card('approval').getByRole('button', { name: 'Decline' }).click();
    expect(await echo).toMatch(/declined by dana/);
    await card('form').getByRole('button', { name: 'Decline' }).click();
    expect(await form).toContain('User declined');
  });

  it('says live updates stopped when eight newer streams of the same principal end its own, and follows again on reload', async () => {
    await page.locator('#connection[data-state="ok"]').waitFor();
    const scripts: OpenStream[] = [];
    try {
      for (let i = 0; i < 8; i++) {
        const stream = await openStream(`${daemon.baseUrl}/admin/inbox/events`, auth());
        await stream.waitFor(/event: snapshot/);
        scripts.push(stream);
      }
      await expect.poll(() => page.locator('#connection').textContent(), POLL).toBe(
        'Live updates stopped: the inbox is open in more than 8 places for dana. Reload the page to follow it again.',
      );
      expect(await page.locator('#connection').getAttribute('data-state')).toBe('bad');
      // Reloading follows the inbox again, and ends the oldest of the scripts' streams instead.
      await page.reload();
      await page.locator('#connection[data-state="ok"]').waitFor();
      await scripts[0].waitFor(/event: closed/);
      for (const stream of scripts.slice(1)) expect(stream.text()).not.toContain('event: closed');
    } finally {
      for (const stream of scripts) stream.close();
    }
  });

  it('ran without a script error or a CSP violation in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
