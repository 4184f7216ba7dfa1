import { describe, expect, it } from 'vitest';
import { Inbox, InboxFullError } from './inbox.js';
import type { InboxEvent, InboxQuestion } from './inbox-item.js';
import { elicitationContentProblems } from './elicitation-form.js';

const form: InboxQuestion = {
  kind: 'elicitation',
  mode: 'form',
  message: 'Who are you?',
  requestedSchema: {
    type: 'object',
    properties: { name: { type: 'string', minLength: 2 }, age: { type: 'integer', minimum: 0 }, colour: { type: 'string', enum: ['red', 'blue'] } },
    required: ['name'],
  },
  server: 'fixture',
  principal: 'alice',
  timeoutMs: 60_000,
};
const alice = { principal: 'alice', admin: false };
const bob = { principal: 'bob', admin: false };
const admin = { principal: 'root', admin: true };

describe('Inbox', () => {
  it('shows a question only to its principal and admins, and takes a valid answer once', async () => {
    const inbox = new Inbox();
    const events: InboxEvent['type'][] = [];
    inbox.onChange((e) => events.push(e.type));
    const outcome = inbox.ask(form);
    expect(inbox.visibleTo(bob)).toEqual([]);
    expect(inbox.visibleTo(admin)).toHaveLength(1);
    const [item] = inbox.visibleTo(alice);
    expect(item.expiresAt - item.createdAt).toBe(60_000);
    expect(inbox.answer(item.id, bob, { action: 'decline' })?.status).toBe(404);
    expect(inbox.answer(item.id, alice, { action: 'accept', content: { name: 'A', age: 1.5, extra: 1 } })).toEqual({
      status: 400,
      problems: ['extra is not a field of this form', 'name must be at least 2 characters', 'age must be a whole number'],
    });
    expect(inbox.answer(item.id, alice, { action: 'approve' })?.status).toBe(400);
    expect(inbox.answer(item.id, alice, { action: 'accept', content: { name: 'Al', colour: 'red' } })).toBeUndefined();
    await expect(outcome).resolves.toEqual({ action: 'accept', content: { name: 'Al', colour: 'red' }, answeredBy: 'alice' });
    expect(inbox.answer(item.id, alice, { action: 'cancel' })?.status).toBe(404);
    expect(inbox.size).toBe(0);
    expect(events).toEqual(['added', 'removed']);
  });

  it('holds at most 50 pending questions per principal, so one caller cannot fill it for everyone', async () => {
    const inbox = new Inbox();
    const asked = Array.from({ length: 50 }, () => inbox.ask(form));
    await expect(inbox.ask(form)).rejects.toThrow(InboxFullError);
    await expect(inbox.ask(form)).rejects.toThrow('The inbox already holds 50 pending questions for alice');
    const bobs = inbox.ask({ ...form, principal: 'bob' });
    expect(inbox.size).toBe(51);
    inbox.withdrawAll();
    await Promise.all([...asked, bobs]);
    expect(inbox.size).toBe(0);
  });

  it('holds at most 50 questions whose cause is unknown, so they cannot starve the principals\' questions', async () => {
    const inbox = new Inbox();
    const asked = Array.from({ length: 50 }, () => inbox.ask({ ...form, principal: null }));
    await expect(inbox.ask({ ...form, principal: null })).rejects.toThrow('The inbox already holds 50 pending questions whose cause is unknown');
    const alices = inbox.ask(form);
    expect(inbox.size).toBe(51);
    inbox.withdrawAll();
    await Promise.all([...asked, alices]);
  });

  it('expires, and leaves the inbox', async () => {
    const inbox = new Inbox();
    await expect(inbox.ask({ ...form, timeoutMs: 5 })).resolves.toEqual({ action: 'expired' });
    expect(inbox.size).toBe(0);
  });

  it('is withdrawn when the asker stops waiting, and at shutdown', async () => {
    const inbox = new Inbox();
    const abort = new AbortController();
    const first = inbox.ask(form, abort.signal);
    const second = inbox.ask({ ...form, principal: null });
    expect(inbox.visibleTo(alice)).toHaveLength(1);
    abort.abort();
    await expect(first).resolves.toEqual({ action: 'withdrawn' });
    inbox.withdrawAll();
    await expect(second).resolves.toEqual({ action: 'withdrawn' });
    expect(inbox.size).toBe(0);
  });

  it('lets an approval be remembered only for the offered durations', async () => {
    const inbox = new Inbox();
    const asked = inbox.ask({
      kind: 'approval',
      tool: 'fs__delete',
      arguments: { path: '/tmp/x' },
      argumentsDigest: 'd',
      rule: 'ops#1',
      rememberChoicesMs: [900_000],
      server: 'fs',
      principal: 'alice',
      timeoutMs: 60_000,
    });
    const [item] = inbox.visibleTo(alice);
    expect(inbox.answer(item.id, alice, { action: 'approve', rememberForMs: 5 })?.problems).toEqual(['rememberForMs must be one of 0, 900000']);
    expect(inbox.answer(item.id, alice, { action: 'accept' })?.status).toBe(400);
    expect(inbox.answer(item.id, alice, { action: 'approve', rememberForMs: 900_000 })).toBeUndefined();
    await expect(asked).resolves.toMatchObject({ action: 'approve', rememberForMs: 900_000 });
  });
});

describe('a policy change', () => {
  const approval = (policyDigest: string): InboxQuestion => ({
    kind: 'approval',
    tool: 'fs__delete',
    arguments: {},
    rule: 'ops#1',
    policyDigest,
    rememberChoicesMs: [],
    server: 'fs',
    principal: 'alice',
    timeoutMs: 60_000,
  });

  it('withdraws the approvals asked under another policy as stale, and leaves the rest', async () => {
    const inbox = new Inbox();
    const removed: unknown[] = [];
    inbox.onChange((e) => e.type === 'removed' && removed.push(e));
    const old = inbox.ask(approval('p1'));
    const current = inbox.ask(approval('p2'));
    const question = inbox.ask(form);
    const [oldItem] = inbox.visibleTo(alice);
    expect(inbox.withdrawStale('p2')).toBe(1);
    await expect(old).resolves.toEqual({ action: 'stale' });
    expect(removed).toEqual([{ type: 'removed', id: oldItem.id, principal: 'alice', outcome: 'stale' }]);
    // An approver who answers it now finds it gone.
    expect(inbox.answer(oldItem.id, alice, { action: 'approve' })?.status).toBe(404);
    expect(inbox.visibleTo(alice).map((i) => i.kind)).toEqual(['approval', 'elicitation']);
    inbox.withdrawAll();
    await Promise.all([current, question]);
  });
});

describe('an approval whose rule names approvers', () => {
  const deploy: InboxQuestion = {
    kind: 'approval',
    tool: 'ci__deploy',
    arguments: { env: 'prod' },
    rule: 'lead-deploys',
    approvers: ['lead', 'sre'],
    rememberChoicesMs: [],
    server: 'ci',
    principal: 'alice',
    timeoutMs: 60_000,
  };
  const lead = (principal: string) => ({ principal, admin: false, roles: () => ['dev', 'lead'] });

  it('is answered by a member of a role or an admin, never by the caller, who sees it wait', async () => {
    const inbox = new Inbox();
    const removed: unknown[] = [];
    inbox.onChange((e) => e.type === 'removed' && removed.push(e));
    const asked = inbox.ask(deploy);
    const [mine] = inbox.visibleTo(alice);
    expect(mine).toMatchObject({ answerable: false, approvers: ['lead', 'sre'] });
    expect(inbox.answer(mine.id, alice, { action: 'approve' })).toEqual({
      status: 403,
      problems: ["this is your own call; rule 'lead-deploys' needs someone else with roles lead or sre to approve it"],
      ownApproval: { principal: 'alice' },
    });
    expect(inbox.visibleTo(bob)).toEqual([]);
    expect(inbox.answer(mine.id, bob, { action: 'approve' })).toMatchObject({ status: 404, othersQuestion: { principal: 'alice' } });
    expect(inbox.visibleTo({ ...bob, roles: () => ['sre'] })).toEqual([expect.objectContaining({ answerable: true })]);
    expect(inbox.visibleTo(admin)).toEqual([expect.objectContaining({ answerable: true })]);
    expect(inbox.answer(mine.id, lead('carol'), { action: 'approve' })).toBeUndefined();
    await expect(asked).resolves.toEqual({ action: 'approve', answeredBy: 'carol' });
    // Those who saw it are told it left: the removal carries who could.
    expect(removed).toEqual([expect.objectContaining({ principal: 'alice', approvers: ['lead', 'sre'], outcome: 'approve' })]);
  });

  it('cannot be approved by the caller under another spelling or method of its name, role or admin notwithstanding', () => {
    const inbox = new Inbox();
    void inbox.ask({ ...deploy, principal: 'Ånna' });
    const [item] = inbox.visibleTo(admin);
    const decomposed = 'A\u030anna'.toLowerCase();
    // An approver by role who may be the caller sees it wait, and is refused with why.
    for (const alike of [{ ...lead(decomposed), admin: true }, lead('jwt:ÅNNA'), lead('key:ånna')]) {
      expect(inbox.visibleTo(alike), alike.principal).toEqual([expect.objectContaining({ answerable: false })]);
      expect(inbox.answer(item.id, alike, { action: 'approve' })).toEqual({
        status: 403,
        problems: [`this call is Ånna's, whom your name says you may be; rule 'lead-deploys' needs someone else with roles lead or sre to approve it`],
        ownApproval: { principal: 'Ånna' },
      });
    }
    // One who may be the caller but approves nothing sees nothing of it: its arguments are not theirs.
    expect(inbox.visibleTo({ principal: 'jwt:anna\u030a', admin: false })).toEqual([]);
    expect(inbox.visibleTo(lead('ANNA'))).toEqual([expect.objectContaining({ answerable: true })]);
    inbox.withdrawAll();
  });

  it("reads the viewer's roles when it decides, so a policy reload counts at once", () => {
    const inbox = new Inbox();
    void inbox.ask(deploy);
    let roles = ['lead'];
    const viewer = { principal: 'dan', admin: false, roles: () => roles };
    expect(inbox.visibleTo(viewer)).toHaveLength(1);
    roles = ['dev'];
    expect(inbox.visibleTo(viewer)).toEqual([]);
    inbox.withdrawAll();
  });
});

describe('elicitationContentProblems', () => {
  it('checks formats, choices and multi-selects', () => {
    const schema = {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        when: { type: 'string', format: 'date' },
        size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }] },
        tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 1 },
        ok: { type: 'boolean' },
      },
    };
    expect(elicitationContentProblems(schema, { email: 'a@b', when: '2026-11-22', size: 's', tags: ['a'], ok: true })).toEqual([]);
    expect(elicitationContentProblems(schema, { email: 'nope', when: '22/11', size: 'm', tags: ['a', 'b'], ok: 'yes' })).toEqual([
      'email must be a valid email',
      'when must be a valid date',
      'size must be one of s',
      'tags allows at most 1 choices',
      'ok must be true or false',
    ]);
  });
});
