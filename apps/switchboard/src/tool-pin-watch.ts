import { systemEntry, type AuditLog } from '@switchboard/audit';
import type { CatalogStore } from '@switchboard/catalog';
import type { Logger } from '@switchboard/observability';
import { PinWatch, type PinChange, type PinGuard } from '@switchboard/policy';

/** Each upstream's tools are checked against their pins whenever its list is new. */
export function watchToolPins(pins: PinGuard, catalog: CatalogStore, logger: Logger): void {
  const watch = new PinWatch(pins, (server, err) => logger.error({ err, server }, 'tool pins could not be checked'));
  catalog.onChange(() => watch.update(catalog.servers().map((server) => [server, catalog.snapshot(server)!.tools] as const)));
}

/**
 * A tool whose definition changed since it was pinned: logged for the operator, who must
 * accept a held-back tool, and a row of its own in the audit log (docs/audit.md).
 */
export function reportPinChange(change: PinChange, logger: Logger, audit: AuditLog | undefined): void {
  const held = change.outcome === 'quarantined';
  logger.warn(
    { server: change.server, tool: change.tool, previousHash: change.previousHash, hash: change.hash },
    held
      ? 'a tool definition changed since it was pinned: the tool is held back until `switchboard tools accept`'
      : 'a tool definition changed since it was pinned (pin: warn): the new definition is pinned',
  );
  audit?.note(
    systemEntry(
      {
        method: 'tools/definition-changed',
        // The upstream's own name for the tool (no host named it): found by --upstream and --method.
        upstream: change.server,
        name: change.tool,
        originalName: change.tool,
        decision: held ? 'denied' : 'allowed',
        rule: held ? 'pin:quarantined' : 'pin:warn',
        outcome: null,
        errorMessage: `tool '${change.tool}' of '${change.server}' changed its definition`,
      },
      { server: change.server, tool: change.tool, previousHash: change.previousHash, hash: change.hash },
    ),
  );
}
