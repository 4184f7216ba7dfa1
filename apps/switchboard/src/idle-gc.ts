import { getHeapStatistics } from 'node:v8';
import type { Logger } from '@switchboard/observability';

export interface IdleGcOptions {
  /** Node's `gc`, defined under `--expose-gc` (which `npm start` passes); without it nothing is done. */
  gc?: () => void;
  /** How long without activity counts as idle. */
  idleMs?: number;
  /** The least growth of the heap in use since the last collection that makes one worth its time. */
  minGrowthBytes?: number;
  /** Whether requests are still running (an upstream call in flight): then it is not idle. */
  busy?: () => boolean;
  /** The heap in use, bytes. */
  heapUsed?: () => number;
}

const MiB = 1024 * 1024;

/**
 * A full garbage collection when the daemon goes idle with garbage to reclaim: once
 * `idleMs` pass with no activity (a request, an upstream connecting or going away) and no
 * call in flight, if the heap in use has grown by `minGrowthBytes` since the last one.
 *
 * Why: V8 runs a full collection only when the old generation fills up, and an idle daemon
 * allocates nothing, so whatever start-up (NestJS, TypeORM, zod's config schemas, the
 * upstreams' catalogs) or a burst of calls left behind stays resident for as long as the
 * daemon sits idle, which for a background service is most of its life. 5 s because V8
 * gives back the young generation's grown space only when its allocation rate has been low
 * over its last 5 s: a collection sooner frees the garbage but not the pages (measured, with
 * 10 upstreams: RSS 109-115 MiB before, 102-103 MiB after; docs/performance.md). One
 * collection of the ~30 MiB heap takes 15-40 ms, when nothing is waiting for the daemon.
 *
 * A busy daemon pays a clock read a request; no timer runs once it is idle.
 */
export class IdleGc {
  private readonly gc?: () => void;
  private readonly idleMs: number;
  private readonly minGrowthBytes: number;
  private readonly busy: () => boolean;
  private readonly heapUsed: () => number;
  private lastActivity = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The heap in use right after the last collection; 0 before the first, which start-up's garbage always warrants. */
  private baseline = 0;
  private stopped = false;

  constructor(
    private readonly logger: Logger,
    options: IdleGcOptions = {},
  ) {
    this.gc = options.gc;
    this.idleMs = options.idleMs ?? 5000;
    this.minGrowthBytes = options.minGrowthBytes ?? 4 * MiB;
    this.busy = options.busy ?? (() => false);
    this.heapUsed = options.heapUsed ?? (() => getHeapStatistics().used_heap_size);
  }

  /** Something happened: the idle period starts again from now. */
  activity(): void {
    if (!this.gc || this.stopped) return;
    this.lastActivity = Date.now();
    this.timer ??= this.arm(this.idleMs);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(delayMs: number): NodeJS.Timeout {
    return setTimeout(() => this.check(), delayMs).unref();
  }

  private check(): void {
    this.timer = undefined;
    const quietFor = Date.now() - this.lastActivity;
    // Activity since the timer was set: wait out the idle period from the last of it.
    if (quietFor < this.idleMs) this.timer = this.arm(this.idleMs - quietFor);
    else if (this.busy()) this.timer = this.arm(this.idleMs);
    else this.collectIfWorthIt();
  }

  private collectIfWorthIt(): void {
    const before = this.heapUsed();
    if (before - this.baseline < this.minGrowthBytes) return;
    const started = performance.now();
    this.gc!();
    const after = this.heapUsed();
    this.baseline = after;
    this.logger.debug(
      { ms: Math.round(performance.now() - started), heapUsedMiB: [toMiB(before), toMiB(after)] },
      'idle: garbage collected',
    );
  }
}

function toMiB(bytes: number): number {
  return Math.round((bytes / MiB) * 10) / 10;
}
