import { appendRow, bareEntry } from '@switchboard/audit';
import type { GatewayConfig } from '@switchboard/config';
import { stdioPrincipal } from '@switchboard/downstream';
import { sqliteConnection } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';

/**
 * The audit row of an administrative command (a key created, rotated or revoked, a secret set
 * or deleted, a tool's new definition accepted): who ran it on this machine and what it
 * changed, never a key's or a secret's value. On a shared endpoint it is what says who
 * granted or withdrew access. In the chain beside the daemon's rows; none with
 * `audit.enabled: false`. Written after the change, in the same database: a row that cannot
 * be written fails the command (exit 1) rather than pass unrecorded.
 */
export function recordAdminAction(config: GatewayConfig, dataSource: DataSource, name: string, facts: Record<string, unknown>): void {
  if (!config.audit.enabled) return;
  appendRow(
    sqliteConnection(dataSource),
    bareEntry({
      // The user running the command, named as `switchboard stdio` names its user.
      principal: stdioPrincipal().id,
      authMethod: 'cli',
      method: 'admin',
      name,
      arguments: JSON.stringify(facts),
      decision: 'allowed',
      rule: 'admin:cli',
      outcome: 'ok',
      errorMessage: null,
    }),
  );
}

