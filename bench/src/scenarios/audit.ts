/**
 * Audit rows per second: how fast the daemon can write its audit log under load.
 *
 * HOOK: the audit log does not exist yet (issue 4). Once it does, measure here: run
 * a closed loop of tools/call against switchboard-stdio with auditing on, and count
 * the rows that appear in the audit store over the window (rows/s), next to calls/s,
 * so that a slow audit writer shows up as the gap between the two.
 */
export interface AuditResult {
  rowsPerSec: number | undefined;
  note: string;
}

export async function runAuditScenario(): Promise<AuditResult> {
  return { rowsPerSec: undefined, note: 'n/a — the audit log does not exist yet (issue 4)' };
}
