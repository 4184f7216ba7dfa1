import type { AuditEntry } from './audit.types.js';
import type { RefusalBudget, RefusalSummary } from './refusal-budget.js';

/**
 * One kind of refusal whose rows a RefusalBudget bounds: admits each (own row or counted),
 * and writes the rows that sum up what was counted when its window ends, or when asked (at
 * shutdown), so that every refusal is accounted for.
 */
export class CountedRows<S> {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly budget: RefusalBudget<S>,
    private readonly write: (entry: AuditEntry) => void,
    private readonly summaryEntry: (summary: RefusalSummary<S>) => AuditEntry,
  ) {}

  get perWindow(): number {
    return this.budget.perWindow;
  }

  /** Whether this refusal gets its own row; the summaries of an ended window are written first. */
  admit(key: string, sample: S): boolean {
    const { record, summaries } = this.budget.admit(key, sample);
    for (const summary of summaries) this.write(this.summaryEntry(summary));
    if (!record) this.summarizeAtWindowEnd();
    return record;
  }

  /** Writes the summaries of what is counted so far, now. */
  summarize(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const summary of this.budget.drain()) this.write(this.summaryEntry(summary));
  }

  private summarizeAtWindowEnd(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      for (const summary of this.budget.drainEnded()) this.write(this.summaryEntry(summary));
      // A refusal that came after the window ended but before this timer ran opened the next
      // window; what that one counts is summed up at its own end.
      if (this.budget.suppressing) this.summarizeAtWindowEnd();
    }, this.budget.msLeft);
    this.timer.unref();
  }
}
