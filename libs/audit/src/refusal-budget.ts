/** What an HTTP refusal is about, as a summary row repeats it. */
export interface RefusalSample {
  httpMethod: string;
  path: string;
  decision: 'refused' | 'unauthenticated' | 'denied' | 'limited';
  rule: string;
}

/** The refusals from one address in one window that were counted rather than recorded one by one. */
export interface RefusalSummary<S = RefusalSample> {
  address: string;
  suppressed: number;
  since: number;
  until: number;
  /** The commonest kind counted: what the summary row is about. */
  sample: S;
  /** Each kind counted, commonest first (at most MAX_KINDS; `otherKinds` counts the rest). */
  kinds: { sample: S; count: number }[];
  otherKinds: number;
}

/** Kinds of refusal told apart in one summary; a flood rarely has more than a few. */
const MAX_KINDS = 10;

export interface RefusalBudgetOptions {
  /** Refusals recorded one by one per address and window; the rest are counted. */
  perWindow: number;
  windowMs: number;
  /** Addresses tracked per window; beyond it, all others share one budget. */
  maxAddresses: number;
  now?: () => number;
}

/** The address every address beyond `maxAddresses` is counted under. */
export const OTHER_ADDRESSES = 'other addresses';

/**
 * Bounds the audit rows that requests refused before they were MCP requests (a bad key, a
 * foreign Origin) can make. Those cost the sender nothing, and each was a hash-chained row:
 * 3,000 bogus keys in 3 s were 3,000 rows, a way to fill the disk without a credential.
 * Each client address gets `perWindow` rows a window; the rest are counted, and one row per
 * address says how many, from when to when, so every refusal is still accounted for. The
 * callers are answered the same either way: only the recording is bounded.
 */
export class RefusalBudget<S = RefusalSample> {
  private windowStart: number;
  private readonly counts = new Map<string, AddressCount<S>>();
  private readonly now: () => number;

  constructor(private readonly options: RefusalBudgetOptions) {
    this.now = options.now ?? Date.now;
    this.windowStart = this.now();
  }

  /**
   * Whether this refusal gets its own row; first, the summaries of a window that has ended
   * (to be recorded before it).
   */
  admit(address: string, sample: S): { record: boolean; summaries: RefusalSummary<S>[] } {
    const summaries = this.drainEnded();
    const key = this.counts.has(address) || this.counts.size < this.options.maxAddresses ? address : OTHER_ADDRESSES;
    const count = this.counts.get(key) ?? { recorded: 0, suppressed: 0, kinds: new Map(), otherKinds: 0 };
    this.counts.set(key, count);
    if (count.recorded < this.options.perWindow) {
      count.recorded += 1;
      return { record: true, summaries };
    }
    count.suppressed += 1;
    // By kind, so that the summary says what it counted, not only what came first.
    const kind = JSON.stringify(sample);
    const seen = count.kinds.get(kind);
    if (seen) seen.count += 1;
    else if (count.kinds.size < MAX_KINDS) count.kinds.set(kind, { sample, count: 1 });
    else count.otherKinds += 1;
    return { record: false, summaries };
  }

  /** Whether some refusals of this window await their summary. */
  get suppressing(): boolean {
    for (const count of this.counts.values()) if (count.suppressed > 0) return true;
    return false;
  }

  /** Rows recorded one by one per address and window. */
  get perWindow(): number {
    return this.options.perWindow;
  }

  /** How long until the current window ends, by this budget's clock. */
  get msLeft(): number {
    return Math.max(0, this.windowStart + this.options.windowMs - this.now());
  }

  /**
   * Ends the window only if its time is up: the summaries then, or none. A timer armed for
   * one window uses this, as `admit` does, so that it cannot end a later window early (the
   * later window would be cut short, and each address get another `perWindow` rows in it).
   */
  drainEnded(): RefusalSummary<S>[] {
    return this.now() - this.windowStart >= this.options.windowMs ? this.drain() : [];
  }

  /** Ends the window now: the summaries of what it counted without recording. */
  drain(): RefusalSummary<S>[] {
    const until = this.now();
    const summaries: RefusalSummary<S>[] = [];
    for (const [address, { suppressed, kinds, otherKinds }] of this.counts) {
      if (suppressed === 0) continue;
      // Commonest first; a tie keeps the order they came in.
      const counted = [...kinds.values()].sort((a, b) => b.count - a.count);
      summaries.push({ address, suppressed, since: this.windowStart, until, sample: counted[0]!.sample, kinds: counted, otherKinds });
    }
    this.counts.clear();
    this.windowStart = until;
    return summaries;
  }
}

interface AddressCount<S> {
  recorded: number;
  suppressed: number;
  /** The suppressed refusals by kind (their sample's JSON). */
  kinds: Map<string, { sample: S; count: number }>;
  otherKinds: number;
}
