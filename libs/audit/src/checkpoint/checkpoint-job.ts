import type { Logger } from '@switchboard/observability';
import type { ChainHead } from '../chain/chain-head.js';
import type { AuditEntry } from '../audit.types.js';
import type { JournalMark } from '../journal/journal-mark.js';
import type { Committer } from '../writer/committer.js';
import { checkpointLine, type Checkpoint } from './checkpoint-line.js';

/**
 * Keeps the newest head this process knows of: each commit's (id and hash from the commit itself,
 * the time from its last row), and rows no commit of it reports (`note`: the log's newest
 * row as a start finds it, after a killed run's journal is moved in; a pruning run's
 * `audit/pruned` row).
 * A checkpoint then costs no query, and a call never waits for one.
 */
export class HeadKeeper {
  private last: Checkpoint | undefined;

  /** The newest row this process wrote or was told of, if any yet. */
  get head(): Checkpoint | undefined {
    return this.last;
  }

  /**
   * A row no commit of this process reports (found at start, or appended beside the
   * writer). Rows appended meanwhile by the writer can be newer: a commit in the worker
   * thread (`synchronous: full`) reports its head after the main thread wrote a pruning
   * marker, so a head older than the one kept is not taken.
   */
  note(head: Checkpoint | undefined): void {
    if (head) this.keep(head);
  }

  /** `inner`, noting the head of every commit that succeeds. */
  keeping(inner: Committer): Committer {
    return {
      commit: async (entries: readonly AuditEntry[], mark?: JournalMark): Promise<ChainHead> => {
        const head = await inner.commit(entries, mark);
        if (entries.length > 0) this.keep({ ...head, at: entries[entries.length - 1].at });
        return head;
      },
      close: () => inner.close(),
    };
  }

  /**
   * Ids only rise, so the newest head has the highest id. The same id again is taken (its
   * hash may differ: rows cut under the running daemon and written again); a lower one is a
   * late report, or rows cut under the daemon, where the higher head is what shows the cut.
   */
  private keep(head: Checkpoint): void {
    if (!this.last || head.id >= this.last.id) this.last = head;
  }
}

/**
 * Logs a checkpoint of the chain's head every `everyMs` (at info, to the daemon's log), when
 * the head moved since the last one, and once more at stop (after the writer's final
 * commit). A log shipper then keeps them outside the database, with no other setup: the
 * anchor `audit verify --checkpoint` checks the log against.
 */
export class CheckpointJob {
  private timer: NodeJS.Timeout | undefined;
  private logged: Checkpoint | undefined;

  constructor(
    private readonly heads: HeadKeeper,
    private readonly everyMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.logHead(), this.everyMs);
    // A pending checkpoint must not keep the process alive.
    this.timer.unref();
  }

  /** Call after the writer's close: the final commit's head is logged. */
  stop(): void {
    clearInterval(this.timer);
    this.logHead();
  }

  /** Logs the head unless it is the one logged last (or none was written). */
  logHead(): void {
    const head = this.heads.head;
    // By hash too: rows cut under the running daemon let a new head take a logged id.
    if (!head || (head.id === this.logged?.id && head.hash === this.logged.hash)) return;
    this.logged = head;
    this.logger.info(`audit: checkpoint ${checkpointLine(head)}`);
  }
}
