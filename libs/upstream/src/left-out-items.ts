import { counted } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';

/** What one read of a list left out because no host could be served it. */
export interface LeftOut {
  /** How many items. */
  count: number;
  /** The first few, each with the reason it was left out. */
  examples: string[];
}

/**
 * One warning per list of an upstream for the items it leaves out, when they first appear or
 * change, rather than one at every read: a list is read at connect and again at every
 * list_changed, and an upstream such as server-everything sends list_changed right after
 * initialized, so what its list left out was logged two or three times at every start.
 */
export class LeftOutItems {
  /** The latest read's items left out, per method, as the warning would say them. */
  private readonly said = new Map<string, string>();

  constructor(private readonly log: Logger) {}

  /** The outcome of the latest read of `method`: `leftOut` undefined when it left none out. */
  record(method: string, leftOut: LeftOut | undefined): void {
    if (leftOut === undefined) {
      // A list that is whole again warns anew should it lose items later.
      this.said.delete(method);
      return;
    }
    const what = JSON.stringify([leftOut.count, leftOut.examples]);
    if (this.said.get(method) === what) return;
    this.said.set(method, what);
    this.log.warn(
      { method, dropped: leftOut.count, examples: leftOut.examples },
      `${method}: ${counted(leftOut.count, 'item')} left out that no host could be served`,
    );
  }
}
