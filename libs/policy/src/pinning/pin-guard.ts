import { canonicalJson } from '@switchboard/core';
import type { PinStore } from './pin-store.js';
import { definitionFingerprint, pinnedDefinition } from './tool-fingerprint.js';

/** Per server: `strict` quarantines a changed tool, `warn` reports and re-pins it, `off` ignores. */
export type PinMode = 'strict' | 'warn' | 'off';

export interface PinChange {
  server: string;
  tool: string;
  /** `quarantined` (strict): hidden and refused until accepted; `re-pinned` (warn): still served. */
  outcome: 'quarantined' | 're-pinned';
  previousHash: string;
  hash: string;
}

const keyOf = (server: string, tool: string) => `${server}\u0000${tool}`;

/**
 * The rug-pull defence. A tool's definition is pinned the first time it is seen; when an
 * upstream later serves a different definition under the same name, strict mode holds the
 * tool back (hidden from lists, calls refused with the reason) until an admin accepts the
 * new definition, and warn mode reports the change and pins the new definition.
 */
export class PinGuard {
  private readonly quarantinedKeys = new Set<string>();
  /** The fingerprint each held-back tool is served with now, to notice an acceptance. */
  private readonly served = new Map<string, string>();
  private generation = 0;

  constructor(
    private readonly store: PinStore,
    private readonly modeOf: (server: string) => PinMode,
    private readonly onChange: (change: PinChange) => void,
  ) {}

  /** Checks an upstream's tools (its whole list, as last fetched) against their pins. */
  observe(server: string, tools: readonly Record<string, unknown>[]): void {
    this.generation += 1;
    const mode = this.modeOf(server);
    // The server's tools held back until now stay held back unless this list is judged whole:
    // a list that cannot be judged (a null among the tools) must not lift them.
    const held = new Set<string>();
    if (mode !== 'off') this.judge(server, tools, mode, held);
    this.release(server, (key) => !held.has(key));
    for (const key of held) this.quarantinedKeys.add(key);
  }

  /**
   * Forgets the held-back tools of every server not in `configured` (a reload removed,
   * renamed or disabled it): they were kept for the daemon's life, and a server later configured under
   * the same name started out with them. Its pins stay in the database; a server that is
   * back is judged afresh from its first list. Not for a server that is only down: its list
   * may fail to be judged when it is back, and what it held back must stay held back.
   */
  forgetServersBut(configured: Iterable<string>): void {
    const kept = new Set(configured);
    const gone = (key: string) => !kept.has(key.slice(0, key.indexOf('\u0000')));
    let forgot = false;
    // Deleting the entry a for-of is on is safe for a Set and a Map: the rest are still visited.
    for (const key of this.quarantinedKeys) {
      if (gone(key)) forgot = this.quarantinedKeys.delete(key) || forgot;
    }
    for (const key of this.served.keys()) {
      if (gone(key)) forgot = this.served.delete(key) || forgot;
    }
    if (forgot) this.generation += 1;
  }

  /** Drops the server's held-back keys (and what they were served with) that `drop` names. */
  private release(server: string, drop: (key: string) => boolean): void {
    const prefix = `${server}\u0000`;
    for (const key of [...this.quarantinedKeys]) if (key.startsWith(prefix) && drop(key)) this.quarantinedKeys.delete(key);
    for (const key of [...this.served.keys()]) if (key.startsWith(prefix) && drop(key)) this.served.delete(key);
  }

  /** Pins what is new, re-pins or holds back what changed; adds the held-back keys to `held`. */
  private judge(server: string, tools: readonly Record<string, unknown>[], mode: 'warn' | 'strict', held: Set<string>): void {
    // A name listed twice is served as its first item (the catalog's rule): only that one is
    // judged, or the second would count as a change of the first, hold back the tool that is
    // served, and (listed again) flip its pin back and forth at every read.
    const judged = new Set<string>();
    for (const tool of tools) {
      const name = String(tool.name);
      if (judged.has(name)) continue;
      judged.add(name);
      const definition = pinnedDefinition(tool);
      const hash = definitionFingerprint(definition);
      const text = canonicalJson(definition);
      const pin = this.store.get(server, name);
      if (!pin) {
        this.store.pin(server, name, hash, text);
        continue;
      }
      if (pin.hash === hash) {
        // Back to the pinned definition: a pending change is moot.
        if (pin.pendingHash !== null) this.store.accept(server, name, pin.hash, pin.definition, pin.pinnedAt);
        continue;
      }
      if (mode === 'warn') {
        this.store.accept(server, name, hash, text);
        this.onChange({ server, tool: name, outcome: 're-pinned', previousHash: pin.hash, hash });
        continue;
      }
      held.add(keyOf(server, name));
      this.served.set(keyOf(server, name), hash);
      if (pin.pendingHash !== hash) {
        this.store.quarantine(server, name, hash, text);
        this.onChange({ server, tool: name, outcome: 'quarantined', previousHash: pin.hash, hash });
      }
    }
  }

  isQuarantined(server: string, tool: string): boolean {
    return this.quarantinedKeys.size > 0 && this.quarantinedKeys.has(keyOf(server, tool));
  }

  get holdsAny(): boolean {
    return this.quarantinedKeys.size > 0;
  }

  /** How many tools' held-back state is remembered, of every server (for tests). */
  get rememberedTools(): number {
    return this.served.size;
  }

  /** Changes whenever the held-back set may have: names cached list pages apart. */
  get version(): number {
    return this.generation;
  }

  /** Re-reads the pins of held-back tools (an admin may have accepted one); true if any was released. */
  refresh(): boolean {
    let released = false;
    for (const key of [...this.quarantinedKeys]) {
      const [server, tool] = key.split('\u0000');
      if (this.store.get(server, tool)?.hash === this.served.get(key)) {
        this.quarantinedKeys.delete(key);
        this.served.delete(key);
        released = true;
        this.generation += 1;
      }
    }
    return released;
  }
}
