import { randomUUID } from 'node:crypto';
import type { CancelSignal } from '@switchboard/core';
import { elicitationContentProblems } from './elicitation-form.js';
import { approverWords, mayAnswer, maySee } from './approvers.js';
import type { AnswerRefusal, InboxAnswer, InboxEvent, InboxItem, InboxOutcome, InboxQuestion, InboxViewer, ViewedItem } from './inbox-item.js';

/** Bound on pending questions: each holds a waiting upstream request, and memory. */
const MAX_PENDING = 500;
/**
 * Bound per principal (questions about one principal's calls, or for them to answer), so
 * that one caller cannot fill the inbox for everyone: a batch of calls under a `confirm`
 * rule would otherwise take every place before its rate limits are even counted.
 */
const MAX_PENDING_PER_PRINCIPAL = 50;
/**
 * Bound on questions whose cause is unknown (principal null: an upstream that asked while
 * nobody's request was in flight on it, or while several principals' were). They share one
 * principal's share, so that an upstream asking on its own cannot starve everyone's
 * questions either.
 */
const MAX_PENDING_UNOWNED = MAX_PENDING_PER_PRINCIPAL;

/** The inbox, or the share of it that the question would take, is full; the question was not asked. */
export class InboxFullError extends Error {
  /** `share`: whose share is full (a principal, or null for questions of unknown cause); absent when the whole inbox is. */
  constructor(share?: string | null) {
    super(
      share === undefined
        ? `The inbox already holds ${MAX_PENDING} pending questions`
        : share === null
          ? `The inbox already holds ${MAX_PENDING_UNOWNED} pending questions whose cause is unknown`
          : `The inbox already holds ${MAX_PENDING_PER_PRINCIPAL} pending questions for ${share}`,
    );
  }
}

interface Pending {
  item: InboxItem;
  settle(outcome: InboxOutcome): void;
}

/**
 * Questions for humans that no host could take: elicitations from upstreams and approvals of
 * tool calls. Each waits here, with a deadline, until someone allowed to answer does so on
 * the web page (/admin/inbox), it expires, or the asker stops waiting; in every case it
 * leaves the inbox, so nothing pending outlives its request. Held in memory: a pending
 * question is a request in flight, which a restart ends anyway.
 */
export class Inbox {
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Set<(event: InboxEvent) => void>();

  /** Asks, and resolves with how it ended; never rejects once asked (InboxFullError before). */
  ask(question: InboxQuestion, signal?: CancelSignal): Promise<InboxOutcome> {
    if (this.pending.size >= MAX_PENDING) return Promise.reject(new InboxFullError());
    const share = question.principal === null ? MAX_PENDING_UNOWNED : MAX_PENDING_PER_PRINCIPAL;
    if (this.pendingFor(question.principal) >= share) return Promise.reject(new InboxFullError(question.principal));
    if (signal?.aborted) return Promise.resolve({ action: 'withdrawn' });
    const now = Date.now();
    const item: InboxItem = { ...question, id: randomUUID(), createdAt: now, expiresAt: now + question.timeoutMs };
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle({ action: 'expired' }), question.timeoutMs);
      timer.unref();
      const onAbort = () => settle({ action: 'withdrawn' });
      const settle = (outcome: InboxOutcome) => {
        if (!this.pending.delete(item.id)) return;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const approvers = item.kind === 'approval' ? item.approvers : undefined;
        this.emit({ type: 'removed', id: item.id, principal: item.principal, ...(approvers && { approvers }), outcome: outcome.action });
        resolve(outcome);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(item.id, { item, settle });
      this.emit({ type: 'added', item });
    });
  }

  /** Takes a viewer's answer, or says why not. An answer the question does not allow is refused, not guessed at. */
  answer(id: string, viewer: InboxViewer, answer: InboxAnswer): AnswerRefusal | undefined {
    const found = this.pending.get(id);
    // Someone else's question is "not found", as an unknown one: its existence is not theirs to know.
    const gone = { status: 404 as const, problems: ['no such pending question (answered, expired or withdrawn)'] };
    if (!found) return gone;
    if (!maySee(viewer, found.item)) return { ...gone, othersQuestion: { principal: found.item.principal } };
    if (!mayAnswer(viewer, found.item) && found.item.kind === 'approval') {
      // The caller (or an approver who may be the caller under another name) looking at a call that waits for someone else.
      const { rule, principal } = found.item;
      const whose = principal === viewer.principal ? 'this is your own call' : `this call is ${principal}'s, whom your name says you may be`;
      const problems = [`${whose}; rule '${rule}' needs someone else with ${approverWords(found.item.approvers ?? [])} to approve it`];
      return { status: 403, problems, ownApproval: { principal } };
    }
    const problems = answerProblems(found.item, answer);
    if (problems.length > 0) return { status: 400, problems };
    found.settle({ ...answer, answeredBy: viewer.principal });
    return undefined;
  }

  /** What this viewer may see, oldest first, each saying whether the viewer may answer it. */
  visibleTo(viewer: InboxViewer): ViewedItem[] {
    const seen: ViewedItem[] = [];
    for (const { item } of this.pending.values()) {
      const viewed = viewOf(viewer, item);
      if (viewed) seen.push(viewed);
    }
    return seen;
  }

  private pendingFor(principal: string | null): number {
    let count = 0;
    for (const p of this.pending.values()) if (p.item.principal === principal) count += 1;
    return count;
  }

  get size(): number {
    return this.pending.size;
  }

  /** Every addition and removal; returns the function that stops listening. */
  onChange(listener: (event: InboxEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The policy changed: every approval asked under another one ends now as `stale` (its call
   * is refused and asked again under the new policy), rather than wait for an answer that
   * could no longer let the call through. Returns how many.
   */
  withdrawStale(policyDigest: string): number {
    const stale = [...this.pending.values()].filter(({ item }) => item.kind === 'approval' && item.policyDigest !== undefined && item.policyDigest !== policyDigest);
    for (const p of stale) p.settle({ action: 'stale' });
    return stale.length;
  }

  /** At shutdown: every asker gets `withdrawn` at once instead of waiting out its deadline. */
  withdrawAll(): void {
    for (const p of [...this.pending.values()]) p.settle({ action: 'withdrawn' });
  }

  private emit(event: InboxEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener (an SSE stream that just closed) must not stop the others.
      }
    }
  }
}

/** The item as this viewer gets it, or undefined when it is not theirs to see. */
export function viewOf(viewer: InboxViewer, item: InboxItem): ViewedItem | undefined {
  if (!maySee(viewer, item)) return undefined;
  return { ...item, answerable: mayAnswer(viewer, item) };
}

function answerProblems(item: InboxItem, answer: InboxAnswer): string[] {
  const allowed = item.kind === 'approval' ? ['approve', 'decline'] : ['accept', 'decline', 'cancel'];
  if (!allowed.includes(answer.action)) return [`action must be one of ${allowed.join(', ')}`];
  if (answer.action === 'approve') {
    const remember = answer.rememberForMs;
    if (remember !== undefined && remember !== 0 && !(item.kind === 'approval' && item.rememberChoicesMs.includes(remember))) {
      return [`rememberForMs must be one of ${item.kind === 'approval' ? [0, ...item.rememberChoicesMs].join(', ') : '0'}`];
    }
  }
  if (answer.action === 'accept' && item.kind === 'elicitation') {
    if (item.mode === 'url') return answer.content === undefined ? [] : ['a url-mode elicitation is accepted without content'];
    return elicitationContentProblems(item.requestedSchema ?? {}, answer.content ?? {});
  }
  return [];
}
