import { Cancellation, ErrorCode, McpError } from '@switchboard/core';
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_TASK_BOOK_LIMITS, TaskBook, type NewRelayedTask, type TaskBookLimits } from './task-book.js';

interface Connection {
  name: string;
}

const jobs: Connection = { name: 'jobs' };
const jobsOfBob: Connection = { name: 'jobs' };

function taskOf(principal: string, upstreamTaskId: string, more: Partial<NewRelayedTask<Connection>> = {}): NewRelayedTask<Connection> {
  return { principal, upstream: 'jobs', via: jobs, upstreamTaskId, tool: 'jobs__research', originalName: 'research', status: 'working', ttlMs: 60_000, ...more };
}

/** A book on a clock the spec moves. */
function bookOf(limits: Partial<TaskBookLimits> = {}) {
  const clock = { now: 1_000_000 };
  const book = new TaskBook<Connection>({ ...DEFAULT_TASK_BOOK_LIMITS, ...limits }, () => clock.now);
  return { book, clock };
}

function errorOf(run: () => unknown): McpError {
  try {
    run();
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error('expected an McpError');
}

describe('TaskBook', () => {
  it('gives each task a new 128-bit id of its own, unrelated to the upstream one, shown to hosts in its place', () => {
    const { book } = bookOf();
    const ids = new Set(Array.from({ length: 50 }, (_, i) => book.add(taskOf('alice', `up-${i}`)).id));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    const task = book.add(taskOf('alice', 'up-x', { pollInterval: 500 }));
    expect(book.hostView(task)).toEqual({
      taskId: task.id,
      status: 'working',
      ttl: 60_000,
      createdAt: new Date(1_000_000).toISOString(),
      lastUpdatedAt: new Date(1_000_000).toISOString(),
      pollInterval: 500,
    });
    expect(JSON.stringify(book.hostView(task))).not.toContain('up-x');
  });

  it("answers another principal's task exactly as an unknown or malformed id", () => {
    const { book } = bookOf();
    const task = book.add(taskOf('alice', 'up-1'));
    expect(book.get('alice', task.id)).toBe(task);
    const foreign = errorOf(() => book.get('bob', task.id));
    const unknown = errorOf(() => book.get('alice', 'AAAAAAAAAAAAAAAAAAAAAA'));
    const malformed = errorOf(() => book.get('alice', 42));
    for (const err of [foreign, unknown, malformed]) {
      expect({ code: err.code, message: err.message, data: err.data }).toEqual({ code: ErrorCode.InvalidParams, message: 'Invalid params: unknown task', data: undefined });
    }
  });

  it('refuses a task past the cap per principal, and past the cap in all, with when to retry', () => {
    const { book, clock } = bookOf({ perPrincipal: 2, total: 3, marginMs: 1000 });
    book.add(taskOf('alice', 'a1'));
    clock.now += 5000;
    book.add(taskOf('alice', 'a2'));
    const own = errorOf(() => book.add(taskOf('alice', 'a3')));
    expect(own.code).toBe(ErrorCode.RateLimited);
    // The first of alice's expires at ttl + margin after its creation, 5 s ago.
    expect(own.data).toEqual({ retryAfterMs: 60_000 + 1000 - 5000 });
    // The message names the wait too, as the rate limits' refusal does.
    expect(own.message).toBe('Too many tasks: you hold as many as allowed; fetch or cancel some, or retry in 56 s, when the first of them expires');
    book.add(taskOf('bob', 'b1'));
    const all = errorOf(() => book.add(taskOf('carol', 'c1')));
    expect(all.code).toBe(ErrorCode.RateLimited);
    expect(all.message).toBe('Too many tasks: the gateway holds as many as allowed; fetch or cancel some, or retry in 56 s, when the first of them expires');
    clock.now += 55_750;
    expect(errorOf(() => book.add(taskOf('carol', 'c1'))).message).toMatch(/, or retry in 250 ms, when the first of them expires$/);
    clock.now -= 55_750;
    // Once alice's first task expires, both she and carol may add one again.
    clock.now += 56_000;
    expect(book.add(taskOf('alice', 'a3')).upstreamTaskId).toBe('a3');
    expect(errorOf(() => book.add(taskOf('carol', 'c1'))).code).toBe(ErrorCode.RateLimited);
  });

  it('names no wait when no task it holds would make room', () => {
    // No cap is 0 in the daemon; a book with one is the case where no expiry would help.
    const { book } = bookOf({ perPrincipal: 0 });
    const refused = errorOf(() => book.add(taskOf('alice', 'a1')));
    expect({ code: refused.code, message: refused.message, data: refused.data }).toEqual({
      code: ErrorCode.RateLimited,
      message: 'Too many tasks: you hold as many as allowed; fetch or cancel some',
      data: undefined,
    });
  });

  it('forgets a task at its ttl plus the margin, or at its ttl once its terminal result was fetched, and says so', () => {
    const clock = { now: 1_000_000 };
    const forgotten: string[] = [];
    const book = new TaskBook<Connection>({ ...DEFAULT_TASK_BOOK_LIMITS, marginMs: 10_000 }, () => clock.now, (task) => forgotten.push(task.upstreamTaskId));
    const unfetched = book.add(taskOf('alice', 'u'));
    const fetched = book.add(taskOf('alice', 'f'));
    const running = book.add(taskOf('alice', 'r'));
    book.update(fetched, { status: 'completed' });
    book.resultFetched(fetched);
    // A result fetched while the task still runs is no terminal result: it keeps the margin.
    book.resultFetched(running);
    clock.now += 59_999;
    expect(book.list('alice').tasks).toHaveLength(3);
    clock.now += 1;
    expect(book.find('alice', fetched.id)).toBeUndefined();
    expect(book.find('alice', unfetched.id)).toBe(unfetched);
    expect(book.find('alice', running.id)).toBe(running);
    clock.now += 10_000;
    expect(book.find('alice', unfetched.id)).toBeUndefined();
    expect(book.ofUpstream(jobs, 'r')).toBeUndefined();
    expect(book.size).toBe(0);
    expect(forgotten.sort()).toEqual(['f', 'r', 'u']);
  });

  it('forgets an expired task on its own when no host creates or lists one, ending its progress, and then keeps no timer', () => {
    vi.useFakeTimers();
    try {
      const forgotten: string[] = [];
      const limits = { ...DEFAULT_TASK_BOOK_LIMITS, marginMs: 10_000, sweepEveryMs: 5_000 };
      const book = new TaskBook<Connection>(limits, () => Date.now(), (task) => forgotten.push(task.upstreamTaskId));
      const progressUntil = new Cancellation();
      book.add(taskOf('alice', 'idle', { ttlMs: 60_000, progressUntil }));
      // Still working upstream at its time (it never said otherwise): only the book ends it.
      vi.advanceTimersByTime(69_999);
      expect([book.size, progressUntil.aborted, forgotten]).toEqual([1, false, []]);
      vi.advanceTimersByTime(5_000);
      expect([book.size, progressUntil.aborted, forgotten]).toEqual([0, true, ['idle']]);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('sweeps no more once closed, nor after a task added later', () => {
    vi.useFakeTimers();
    try {
      const forgotten: string[] = [];
      const limits = { ...DEFAULT_TASK_BOOK_LIMITS, marginMs: 0, sweepEveryMs: 5_000 };
      const book = new TaskBook<Connection>(limits, () => Date.now(), (task) => forgotten.push(task.upstreamTaskId));
      book.add(taskOf('alice', 'before', { ttlMs: 1_000 }));
      expect(vi.getTimerCount()).toBe(1);
      book.close();
      expect(vi.getTimerCount()).toBe(0);
      book.add(taskOf('alice', 'after', { ttlMs: 1_000 }));
      vi.advanceTimersByTime(60_000);
      expect([vi.getTimerCount(), forgotten, book.size]).toEqual([0, [], 2]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps a task the upstream keeps forever (ttl null) for the gateway's longest ttl", () => {
    const { book, clock } = bookOf({ maxTtlMs: 3_600_000, marginMs: 0 });
    const task = book.add(taskOf('alice', 'forever', { ttlMs: null }));
    expect(book.hostView(task).ttl).toBe(3_600_000);
    clock.now += 3_599_999;
    expect(book.find('alice', task.id)).toBe(task);
    clock.now += 1;
    expect(book.find('alice', task.id)).toBeUndefined();
  });

  it("lists only the caller's tasks, oldest first, a page at a time with the gateway's own cursor", () => {
    const { book } = bookOf({ pageSize: 2 });
    const alice = ['a1', 'a2', 'a3', 'a4', 'a5'].map((id, i) => {
      if (i % 2 === 0) book.add(taskOf('bob', `b${i}`));
      return book.add(taskOf('alice', id)).id;
    });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = book.list('alice', cursor);
      seen.push(...page.tasks.map((t) => t.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(seen).toEqual(alice);
    expect(pages).toBe(3);
    expect(book.list('carol').tasks).toEqual([]);
  });

  it('refuses a cursor it did not issue with -32602', () => {
    const { book } = bookOf({ pageSize: 1 });
    book.add(taskOf('alice', 'a1'));
    book.add(taskOf('alice', 'a2'));
    const issued = book.list('alice').nextCursor!;
    expect(book.list('alice', issued).tasks.map((t) => t.upstreamTaskId)).toEqual(['a2']);
    const forged = [42, '', 'not a cursor!', Buffer.from('tasks:01').toString('base64url'), Buffer.from('tools:1').toString('base64url'), `${issued}A`];
    for (const cursor of forged) {
      const err = errorOf(() => book.list('alice', cursor));
      expect({ code: err.code, message: err.message }).toEqual({ code: ErrorCode.InvalidParams, message: 'Invalid cursor' });
    }
  });

  it("finds the gateway task behind an upstream's task id on its own connection only", () => {
    const { book } = bookOf();
    const alices = book.add(taskOf('alice', 'same'));
    const bobs = book.add(taskOf('bob', 'same', { via: jobsOfBob }));
    expect(book.ofUpstream(jobs, 'same')).toBe(alices);
    expect(book.ofUpstream(jobsOfBob, 'same')).toBe(bobs);
    expect(book.ofUpstream(jobs, 'other')).toBeUndefined();
  });

  it('keeps a terminal status final, whatever the upstream says after it', () => {
    const { book, clock } = bookOf();
    const task = book.add(taskOf('alice', 'up'));
    clock.now += 10;
    book.update(task, { status: 'input_required', statusMessage: 'asking', pollInterval: 2000 });
    expect(book.hostView(task)).toMatchObject({ status: 'input_required', statusMessage: 'asking', pollInterval: 2000, lastUpdatedAt: new Date(1_000_010).toISOString() });
    book.update(task, { status: 'cancelled' });
    book.update(task, { status: 'working' });
    expect(task.status).toBe('cancelled');
  });

  it("fails the unfinished tasks of a connection that is gone, keeping them for their owner's poll", () => {
    const { book } = bookOf();
    const running = book.add(taskOf('alice', 'r'));
    const done = book.add(taskOf('alice', 'd'));
    book.update(done, { status: 'completed' });
    const elsewhere = book.add(taskOf('bob', 'e', { via: jobsOfBob }));
    expect(book.connectionGone(jobs, "upstream 'jobs' was removed")).toEqual([running]);
    expect(book.get('alice', running.id)).toMatchObject({ status: 'failed', statusMessage: "upstream 'jobs' was removed", unreachable: true });
    expect(book.get('alice', done.id)).toMatchObject({ status: 'completed', unreachable: true });
    expect(book.get('bob', elsewhere.id)).not.toHaveProperty('unreachable');
    expect(book.ofUpstream(jobs, 'r')).toBeUndefined();
    expect(book.connectionGone(jobs, 'again')).toEqual([]);
  });

  it("ends the progress under the creating call's token when the task ends, however the book learns it, or is forgotten", () => {
    const { book, clock } = bookOf();
    const progressOf = () => new Cancellation();
    const [working, cancelled, gone, expired, madeDone] = [progressOf(), progressOf(), progressOf(), progressOf(), progressOf()];
    const task = book.add(taskOf('alice', 'w', { progressUntil: working }));
    book.update(task, { status: 'input_required' });
    book.update(task, { status: 'working' });
    expect(working.aborted).toBe(false);
    book.update(task, { status: 'completed' });
    expect(working.aborted).toBe(true);
    book.update(book.add(taskOf('alice', 'c', { progressUntil: cancelled })), { status: 'cancelled' });
    expect(cancelled.aborted).toBe(true);
    book.add(taskOf('alice', 'g', { progressUntil: gone, via: jobsOfBob }));
    book.connectionGone(jobsOfBob, 'lost');
    expect(gone.aborted).toBe(true);
    // Ended before the book heard of it (an upstream that answers with a completed task).
    book.add(taskOf('alice', 'm', { progressUntil: madeDone, status: 'completed' }));
    expect(madeDone.aborted).toBe(true);
    // Never heard to end: forgotten at its ttl and the margin, its progress with it.
    const forgotten = book.add(taskOf('alice', 'e', { progressUntil: expired }));
    clock.now += 60_000 + DEFAULT_TASK_BOOK_LIMITS.marginMs;
    expect(expired.aborted).toBe(false);
    expect(book.find('alice', forgotten.id)).toBeUndefined();
    expect(expired.aborted).toBe(true);
  });
});
