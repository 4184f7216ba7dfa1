import type { PinGuard } from './pin-guard.js';

type Tool = Record<string, unknown>;

/**
 * Hands each upstream's tools list to the PinGuard whenever the catalog holds a new one (a
 * list is judged once, known by identity). Only the servers the catalog holds now are
 * remembered: a server removed by a reload (or down) kept its last whole list, schemas and
 * all, for the daemon's life, about 20 KB per server name ever configured with 60 small
 * tools and up to the `lists.maxBytes` of one with large ones. A server that is back is
 * judged afresh, as a new list would be anyway.
 */
export class PinWatch {
  private readonly judged = new Map<string, readonly Tool[]>();

  constructor(
    private readonly guard: Pick<PinGuard, 'observe'>,
    private readonly onError: (server: string, err: unknown) => void,
  ) {}

  /** `current`: every server the catalog holds and its tools as held now. */
  update(current: Iterable<readonly [server: string, tools: readonly Tool[]]>): void {
    const present = new Set<string>();
    for (const [server, tools] of current) {
      present.add(server);
      if (this.judged.get(server) === tools) continue;
      try {
        this.guard.observe(server, tools);
        this.judged.set(server, tools);
      } catch (err) {
        // The database is locked or failing: the list is judged again at the next change.
        this.judged.delete(server);
        this.onError(server, err);
      }
    }
    for (const server of [...this.judged.keys()]) if (!present.has(server)) this.judged.delete(server);
  }

  /** How many servers' lists are remembered (for tests). */
  get rememberedServers(): number {
    return this.judged.size;
  }
}
