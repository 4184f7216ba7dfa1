import type { SqliteConnection, SqliteStatement } from '@switchboard/persistence';

export interface ToolPin {
  server: string;
  tool: string;
  hash: string;
  /** Canonical JSON of the pinned definition. */
  definition: string;
  pinnedAt: number;
  /** A changed definition waiting for review (strict mode). */
  pendingHash: string | null;
  pendingDefinition: string | null;
  changedAt: number | null;
}

/**
 * The `tool_pin` table through prepared statements: the daemon checks pins whenever an
 * upstream's tool list changes, and `switchboard tools review|accept` reads and settles them
 * from another process.
 */
export class PinStore {
  private readonly getOne: SqliteStatement;
  private readonly insert: SqliteStatement;
  private readonly setPending: SqliteStatement;
  private readonly repin: SqliteStatement;
  private readonly pendingAll: SqliteStatement;

  constructor(db: SqliteConnection) {
    const columns = `server, tool, hash, definition, pinned_at AS pinnedAt, pending_hash AS pendingHash,
      pending_definition AS pendingDefinition, changed_at AS changedAt`;
    this.getOne = db.prepare(`SELECT ${columns} FROM tool_pin WHERE server = ? AND tool = ?`);
    // OR IGNORE: several processes (a daemon, stdio fronts) may see a new tool at once; the first pin stands.
    this.insert = db.prepare(`INSERT OR IGNORE INTO tool_pin (server, tool, hash, definition, pinned_at) VALUES (?, ?, ?, ?, ?)`);
    this.setPending = db.prepare(`UPDATE tool_pin SET pending_hash = ?, pending_definition = ?, changed_at = ? WHERE server = ? AND tool = ?`);
    this.repin = db.prepare(
      `UPDATE tool_pin SET hash = ?, definition = ?, pinned_at = ?, pending_hash = NULL, pending_definition = NULL WHERE server = ? AND tool = ?`,
    );
    this.pendingAll = db.prepare(`SELECT ${columns} FROM tool_pin WHERE pending_hash IS NOT NULL ORDER BY server, tool`);
  }

  get(server: string, tool: string): ToolPin | undefined {
    return this.getOne.get(server, tool) as ToolPin | undefined;
  }

  pin(server: string, tool: string, hash: string, definition: string, at = Date.now()): void {
    this.insert.run(server, tool, hash, definition, at);
  }

  /** Records a changed definition for review; the pin itself stays. */
  quarantine(server: string, tool: string, hash: string, definition: string, at = Date.now()): void {
    this.setPending.run(hash, definition, at, server, tool);
  }

  /** Makes a definition the pin (warn mode's change, or an admin's acceptance). */
  accept(server: string, tool: string, hash: string, definition: string, at = Date.now()): void {
    this.repin.run(hash, definition, at, server, tool);
  }

  /** Every tool waiting for review. */
  quarantined(): ToolPin[] {
    return this.pendingAll.all() as ToolPin[];
  }
}
