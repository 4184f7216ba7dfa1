import { randomBytes } from 'node:crypto';
import { ErrorCode, McpError, durationText, invalidParams, type Cancellation } from '@switchboard/core';
import { isTerminalStatus, type UpstreamTaskStatus } from '@switchboard/upstream';

/** A task's status (2025-11-25 tasks): the upstream's, which the book relays. */
export type TaskStatus = UpstreamTaskStatus;

export const isTerminal: (status: TaskStatus) => boolean = isTerminalStatus;

/** The limits of a TaskBook; the defaults are the gateway's own. */
export interface TaskBookLimits {
  /** Tasks one principal may hold at once (running or not yet forgotten). */
  perPrincipal: number;
  /** Tasks all principals together may hold. */
  total: number;
  /** The longest a task is kept, also for one the upstream keeps forever (`ttl: null`). */
  maxTtlMs: number;
  /** How long past its ttl a task whose result was never fetched is kept, so a late tasks/result still finds it. */
  marginMs: number;
  /** tasks/list's page size. */
  pageSize: number;
  /**
   * How often the book, while it holds any task, forgets those expired: a task is forgotten
   * within this of its time even when no host creates or lists one (each would sweep too).
   */
  sweepEveryMs: number;
}

export const DEFAULT_TASK_BOOK_LIMITS: TaskBookLimits = {
  perPrincipal: 100,
  total: 10_000,
  maxTtlMs: 24 * 3_600_000,
  marginMs: 60_000,
  pageSize: 50,
  sweepEveryMs: 60_000,
};

/** What the relay knows of a task when the upstream has answered a task-augmented tools/call. */
export interface NewRelayedTask<Via extends object> {
  /** The principal the task is bound to (callerKey): only it may see, poll, fetch or cancel the task. */
  principal: string;
  upstream: string;
  /** The connection the task lives on: per-session and per-principal servers have several. */
  via: Via;
  upstreamTaskId: string;
  /** The tool's public name, and its name upstream. */
  tool: string;
  originalName: string;
  status: TaskStatus;
  /** The upstream's ttl (ms); null when it keeps the task forever. */
  ttlMs: number | null;
  pollInterval?: number;
  statusMessage?: string;
  /**
   * The trace id of the audit row of the tools/call that created it: the rows of the
   * questions its upstream asks while a host waits on its result join that trace, as those
   * asked during a plain call join the call's.
   */
  traceId?: string;
  /**
   * Aborted by the book once the task has ended (a terminal status, however learnt) or is
   * forgotten: the creating call's progress token is the task's until then (the spec), so
   * progress under it goes on to the host only while this has not aborted.
   */
  progressUntil?: Cancellation;
}

export interface RelayedTask<Via extends object> extends Omit<NewRelayedTask<Via>, 'ttlMs'> {
  /** The gateway's task id, the only one a host ever sees. */
  readonly id: string;
  /** The ttl the gateway keeps the task for (the upstream's, capped at maxTtlMs). */
  readonly ttlMs: number;
  readonly createdAt: number;
  lastUpdatedAt: number;
  /** When a host fetched the task's terminal result; a task fetched and past its ttl is forgotten. */
  resultFetchedAt?: number;
  /** Set when its connection is gone: the upstream cannot be asked about it any more. */
  unreachable?: true;
  /** Order of creation, what tasks/list's cursor resumes after. */
  readonly seq: number;
}

/** The Task object (2025-11-25) a host is shown: the gateway's id, never the upstream's. */
export interface HostTask {
  taskId: string;
  status: TaskStatus;
  ttl: number;
  createdAt: string;
  lastUpdatedAt: string;
  pollInterval?: number;
  statusMessage?: string;
}

/**
 * The one error for a task id that is not the caller's to use: unknown, expired, forgotten, or
 * another principal's. The same words for all, so a caller cannot tell whether an id it
 * guessed or saw exists (-32602, as the spec answers an invalid taskId).
 */
export const unknownTask = () => invalidParams('Invalid params: unknown task');

/**
 * The tasks the gateway relays for hosts: each gateway task id (128 random bits) mapped to
 * the upstream task it stands for and bound to the principal that created it, not to a
 * session (a host may leave and come back for its result). Bounded: a cap per principal and
 * in all, and every task is forgotten at its ttl plus a margin, or at its ttl once its
 * terminal result was fetched. Expiry is checked when a task is looked up and swept when one
 * is created or listed, on the clock given, and every `sweepEveryMs` while the book holds a
 * task: swept only on create and list, the tasks of a gateway whose hosts stopped making and
 * listing them stayed past their time until the next create, and with them what ends with a
 * task (its progress route to the host, the upstream side's record of it, its connection).
 * The timer stops once the book is empty, and does not keep the process alive.
 */
export class TaskBook<Via extends object> {
  private readonly tasks = new Map<string, RelayedTask<Via>>();
  /** Per connection: upstream task id -> gateway task id, for the upstream's status notifications. */
  private readonly byUpstream = new Map<Via, Map<string, string>>();
  private readonly counts = new Map<string, number>();
  private nextSeq = 0;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  /** Set by close(): the gateway is shutting down, and no sweep may run after it. */
  private closed = false;

  constructor(
    private readonly limits: TaskBookLimits = DEFAULT_TASK_BOOK_LIMITS,
    private readonly now: () => number = Date.now,
    /** Told of each task forgotten (expired), so the upstream side may forget it too. */
    private readonly forgotten: (task: RelayedTask<Via>) => void = () => undefined,
  ) {}

  /**
   * Records a task an upstream created for a principal, under a new gateway id. Refused with
   * -31429 (data.retryAfterMs, and the message says it: when the principal's, or anyone's,
   * first task expires) when a cap is reached; the caller then cancels the upstream task it
   * cannot hand out.
   */
  add(fields: NewRelayedTask<Via>): RelayedTask<Via> {
    this.sweep();
    const held = this.counts.get(fields.principal) ?? 0;
    if (held >= this.limits.perPrincipal) throw this.full('you hold', (t) => t.principal === fields.principal);
    if (this.tasks.size >= this.limits.total) throw this.full('the gateway holds', () => true);
    const now = this.now();
    const ttlMs = fields.ttlMs === null ? this.limits.maxTtlMs : Math.min(Math.max(0, fields.ttlMs), this.limits.maxTtlMs);
    const task: RelayedTask<Via> = { ...fields, id: newTaskId(), ttlMs, createdAt: now, lastUpdatedAt: now, seq: this.nextSeq++ };
    if (isTerminal(task.status)) task.progressUntil?.abort();
    this.tasks.set(task.id, task);
    this.counts.set(task.principal, held + 1);
    let ofVia = this.byUpstream.get(task.via);
    if (!ofVia) this.byUpstream.set(task.via, (ofVia = new Map()));
    ofVia.set(task.upstreamTaskId, task.id);
    if (!this.closed) this.sweeper ??= setInterval(() => this.sweep(), this.limits.sweepEveryMs).unref();
    return task;
  }

  /**
   * The gateway is shutting down: the sweep stops, and none starts again (it would go on
   * forgetting tasks, and telling connections already stopped to forget theirs). The tasks
   * are left as they are; the book still answers lookups and forgets on use.
   */
  close(): void {
    this.closed = true;
    this.stopSweeping();
  }

  /** The principal's task with this id; undefined when there is none for it (see unknownTask). */
  find(principal: string, id: unknown): RelayedTask<Via> | undefined {
    if (typeof id !== 'string') return undefined;
    const task = this.tasks.get(id);
    if (!task) return undefined;
    if (this.expired(task)) {
      this.forget(task);
      return undefined;
    }
    return task.principal === principal ? task : undefined;
  }

  /** As find, but a task that is not the principal's is the unknown-task error. */
  get(principal: string, id: unknown): RelayedTask<Via> {
    const task = this.find(principal, id);
    if (!task) throw unknownTask();
    return task;
  }

  /** The gateway task an upstream's task on this connection stands behind (its status notifications). */
  ofUpstream(via: Via, upstreamTaskId: string): RelayedTask<Via> | undefined {
    const id = this.byUpstream.get(via)?.get(upstreamTaskId);
    const task = id === undefined ? undefined : this.tasks.get(id);
    if (!task || !this.expired(task)) return task;
    this.forget(task);
    return undefined;
  }

  /** What the upstream said of the task now (tasks/get, a status notification, tasks/cancel's answer). */
  update(task: RelayedTask<Via>, state: { status: TaskStatus; statusMessage?: string; pollInterval?: number }): void {
    // A terminal status is final (the spec): a late notification must not revive the task.
    if (isTerminal(task.status)) return;
    task.status = state.status;
    if (state.statusMessage !== undefined) task.statusMessage = state.statusMessage;
    if (state.pollInterval !== undefined) task.pollInterval = state.pollInterval;
    task.lastUpdatedAt = this.now();
    // Progress for a task stops at its terminal status (the spec).
    if (isTerminal(task.status)) task.progressUntil?.abort();
  }

  /** A host fetched the task's terminal result: it is forgotten once its ttl has passed, without the margin. */
  resultFetched(task: RelayedTask<Via>): void {
    if (isTerminal(task.status)) task.resultFetchedAt ??= this.now();
  }

  /**
   * The tasks of connections that are gone for good (a reload removed their upstream): each
   * one not yet ended fails, with a message saying why, and is returned (its owner may be
   * told); they stay until they expire, so a host polling one learns how it ended.
   */
  connectionGone(via: Via, why: string): RelayedTask<Via>[] {
    const ids = this.byUpstream.get(via);
    if (!ids) return [];
    this.byUpstream.delete(via);
    const failed: RelayedTask<Via>[] = [];
    for (const id of ids.values()) {
      const task = this.tasks.get(id);
      if (!task) continue;
      task.unreachable = true;
      if (isTerminal(task.status)) continue;
      this.update(task, { status: 'failed', statusMessage: why });
      failed.push(task);
    }
    return failed;
  }

  /**
   * One page of the principal's tasks, oldest first, and the cursor of the next page if any.
   * The cursor is the gateway's own (the last task's place in the order); anything else is -32602.
   */
  list(principal: string, cursor?: unknown): { tasks: RelayedTask<Via>[]; nextCursor?: string } {
    this.sweep();
    const after = cursor === undefined ? -1 : decodeTaskCursor(cursor);
    const page: RelayedTask<Via>[] = [];
    // A Map iterates in insertion order, which is seq order.
    for (const task of this.tasks.values()) {
      if (task.principal !== principal || task.seq <= after) continue;
      if (page.length === this.limits.pageSize) return { tasks: page, nextCursor: encodeTaskCursor(page[page.length - 1].seq) };
      page.push(task);
    }
    return { tasks: page };
  }

  /** How many tasks the book holds (for the admin status and the specs). */
  get size(): number {
    return this.tasks.size;
  }

  /** The task as a host is shown it. */
  hostView(task: RelayedTask<Via>): HostTask {
    return {
      taskId: task.id,
      status: task.status,
      ttl: task.ttlMs,
      createdAt: new Date(task.createdAt).toISOString(),
      lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
      ...(task.pollInterval !== undefined ? { pollInterval: task.pollInterval } : {}),
      ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    };
  }

  /** The latest the task is kept to: its ttl and the margin to fetch its result. */
  keptUntil(task: RelayedTask<Via>): number {
    return task.createdAt + task.ttlMs + this.limits.marginMs;
  }

  /** When the task is forgotten: at its ttl once its result was fetched, else keptUntil. */
  private forgetAt(task: RelayedTask<Via>): number {
    return task.resultFetchedAt !== undefined ? task.createdAt + task.ttlMs : this.keptUntil(task);
  }

  private expired(task: RelayedTask<Via>): boolean {
    return this.now() >= this.forgetAt(task);
  }

  /** Forgets every expired task: O(tasks), at most `total`, on add and list and every sweepEveryMs. */
  private stopSweeping(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private sweep(): void {
    for (const task of this.tasks.values()) if (this.expired(task)) this.forget(task);
  }

  private forget(task: RelayedTask<Via>): void {
    if (!this.tasks.delete(task.id)) return;
    task.progressUntil?.abort();
    if (this.tasks.size === 0) this.stopSweeping();
    const left = (this.counts.get(task.principal) ?? 1) - 1;
    if (left > 0) this.counts.set(task.principal, left);
    else this.counts.delete(task.principal);
    const ofVia = this.byUpstream.get(task.via);
    if (ofVia?.get(task.upstreamTaskId) === task.id) {
      ofVia.delete(task.upstreamTaskId);
      if (ofVia.size === 0) this.byUpstream.delete(task.via);
    }
    this.forgotten(task);
  }

  private full(who: string, counted: (task: RelayedTask<Via>) => boolean): McpError {
    const now = this.now();
    let soonest = Infinity;
    for (const task of this.tasks.values()) {
      if (counted(task)) soonest = Math.min(soonest, this.forgetAt(task) - now);
    }
    const full = `Too many tasks: ${who} as many as allowed; fetch or cancel some`;
    // No task held to wait for (a cap of 0): no time makes room, and none is named.
    if (soonest === Infinity) return new McpError(ErrorCode.RateLimited, full);
    const retryAfterMs = Math.max(1, Math.ceil(soonest));
    // The message names the wait of data.retryAfterMs, as the rate limits' refusal does.
    return new McpError(ErrorCode.RateLimited, `${full}, or retry in ${durationText(retryAfterMs)}, when the first of them expires`, { retryAfterMs });
  }
}

/** A gateway task id: 128 bits from the CSPRNG, base64url, so a host cannot guess another's. */
function newTaskId(): string {
  return randomBytes(16).toString('base64url');
}

const CURSOR_PREFIX = 'tasks:';

/** tasks/list's cursor: base64url of `tasks:<seq>`; it grants nothing (the list is the caller's own), so it is only validated. */
function encodeTaskCursor(seq: number): string {
  return Buffer.from(`${CURSOR_PREFIX}${seq}`, 'utf8').toString('base64url');
}

function decodeTaskCursor(cursor: unknown): number {
  if (typeof cursor !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) throw invalidCursor();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const digits = text.startsWith(CURSOR_PREFIX) ? text.slice(CURSOR_PREFIX.length) : '';
  // The canonical form only: a hand-edited cursor is refused rather than guessed at.
  if (!/^(0|[1-9][0-9]{0,15})$/.test(digits) || encodeTaskCursor(Number(digits)) !== cursor) throw invalidCursor();
  return Number(digits);
}

const invalidCursor = () => invalidParams('Invalid cursor');
