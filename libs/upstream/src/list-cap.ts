import type { ListLimits } from '@switchboard/config';
import { countedBe } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';

type Item = Record<string, unknown>;

/** A list the gateway cut short: how much it kept, and the limit that stopped it. */
export interface CutList {
  /** The list's method, e.g. `tools/list`. */
  method: string;
  /** Items kept: the first ones of the upstream's list, in its order. */
  kept: number;
  limit: keyof ListLimits;
  /** That limit's value. */
  max: number;
}

/**
 * One list as the gateway keeps it: the upstream's items in its order until one would pass
 * a limit; that item and every later one are left out, so what is kept is a prefix that the
 * same list always cuts the same way (no smaller later item slips in under maxBytes).
 */
export class CappedList {
  readonly items: Item[] = [];
  private bytes = 0;
  /** The limit the list reached; once set, nothing more is taken. */
  cutBy?: keyof ListLimits;

  constructor(private readonly limits: ListLimits) {}

  /** Keeps the item if it fits; false when it does not, and the list is full. */
  add(item: Item): boolean {
    if (this.cutBy !== undefined) return false;
    if (this.items.length >= this.limits.maxItems) return this.cut('maxItems');
    // The entry as it is held and served: its JSON, in UTF-8 bytes.
    const size = Buffer.byteLength(JSON.stringify(item));
    if (this.bytes + size > this.limits.maxBytes) return this.cut('maxBytes');
    this.bytes += size;
    this.items.push(item);
    return true;
  }

  /** What was cut, for a list read by `method`; undefined when nothing was. */
  cutOf(method: string): CutList | undefined {
    if (this.cutBy === undefined) return undefined;
    return { method, kept: this.items.length, limit: this.cutBy, max: this.limits[this.cutBy] };
  }

  private cut(limit: keyof ListLimits): false {
    this.cutBy = limit;
    return false;
  }
}

/**
 * The lists of one upstream that are cut now, for its status, with one warning when a list
 * is first cut (or cut by another limit): an upstream that keeps sending list_changed for a
 * list over its cap is re-read each time, and would otherwise log each time.
 */
export class CutLists {
  private readonly cut = new Map<string, CutList>();

  constructor(
    private readonly server: string,
    private readonly log: Logger,
  ) {}

  /** The outcome of the latest read of `method`: `cut` undefined when it was whole. */
  record(method: string, cut: CutList | undefined): void {
    const before = this.cut.get(method);
    if (cut === undefined) {
      this.cut.delete(method);
      return;
    }
    this.cut.set(method, cut);
    if (before?.limit === cut.limit && before.max === cut.max) return;
    this.log.warn(
      { method, kept: cut.kept, limit: cut.limit, max: cut.max },
      `${method} of upstream '${this.server}' passes lists.${cut.limit} (${cut.max}): only its first ${countedBe(cut.kept, 'item', 'present')} served; ` +
        `raise lists.${cut.limit} for this server to serve more`,
    );
  }

  /** Every cut list, in the order they were first cut. */
  all(): CutList[] {
    return [...this.cut.values()];
  }
}
