import type { Logger } from '@switchboard/observability';
import type { SqliteConnection } from '@switchboard/persistence';
import type { Checkpoint } from '../checkpoint/checkpoint-line.js';
import { pruneBefore } from './prune.js';

/** Told of the `audit/pruned` row a run appends (the checkpoints' HeadKeeper). */
export interface AppendedRows {
  note(head: Checkpoint | undefined): void;
}

const EVERY_MS = 3_600_000;

/**
 * Prunes rows older than the retention period: a minute after start and then hourly, in
 * small transactions between calls. Each run that removes rows leaves a row of its own in
 * the chain (`audit/pruned`, written by pruneBefore with its first chunk), so the log itself
 * says what was removed and when, and `audit verify` can tell pruning from deletion.
 */
export class RetentionJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  /** Ends a run in progress at stop(): a large backlog takes tens of seconds, which shutdown should not wait for. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly db: SqliteConnection,
    private readonly retentionMs: number,
    private readonly logger: Logger,
    /**
     * Told of the marker, which is appended beside the writer, so no commit of its reports it.
     * Required, undefined only where no checkpoints are kept: a caller that left it out would
     * compile and leave the marker out of every checkpoint until the next commit.
     */
    private readonly appended: AppendedRows | undefined,
  ) {}

  start(firstRunMs = 60_000): void {
    const tick = (delay: number) => {
      this.timer = setTimeout(() => {
        this.running = this.runOnce().finally(() => {
          this.running = undefined;
          // A run that stop() cut short schedules no other.
          if (!this.stopping.signal.aborted) tick(EVERY_MS);
        });
      }, delay);
      this.timer.unref();
    };
    tick(firstRunMs);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.stopping.abort();
    await this.running;
  }

  async runOnce(now = Date.now()): Promise<number> {
    const before = now - this.retentionMs;
    try {
      const result = await pruneBefore(this.db, before, undefined, now, this.stopping.signal, (marker) => this.appended?.note(marker));
      if (result.rows > 0) {
        this.logger.info(
          { rows: result.rows, throughId: result.throughId, marker: result.markerId, before: new Date(before).toISOString() },
          'audit: pruned old rows',
        );
      }
      return result.rows;
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'audit: pruning failed; will retry at the next run');
      return 0;
    }
  }
}
