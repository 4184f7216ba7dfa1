/** The `audit` config section of each daemon in the audit scenario; ids name them in the report. */
export const AUDIT_CONFIGS = [
  { id: 'off', label: 'off', audit: { enabled: false } },
  // A second daemon identical to `off`: its ratio to `off` is the noise floor of this run.
  { id: 'off-control', label: 'off again (control)', audit: { enabled: false } },
  { id: 'relaxed', label: 'relaxed (flushMs 200)', audit: { mode: 'relaxed' } },
  // The default configuration, spelled out so that the report says what it measured.
  { id: 'strict-normal', label: 'strict, synchronous normal (default)', audit: { mode: 'strict', synchronous: 'normal' } },
  { id: 'strict-full', label: 'strict, synchronous full', audit: { mode: 'strict', synchronous: 'full' } },
] as const;
export type AuditConfig = (typeof AUDIT_CONFIGS)[number];

export function auditConfigLabel(id: string): string {
  return AUDIT_CONFIGS.find((config) => config.id === id)?.label ?? id;
}

export const AUDIT_OFF = 'off';
export const AUDIT_CONTROL = 'off-control';
export const AUDIT_RELAXED = 'relaxed';
/** What the main matrix's switchboard targets run with, and what the targets judge. */
export const AUDIT_DEFAULT = 'strict-normal';
/** C=16 is what the targets are judged at; C=1 shows a commit's latency undiluted by batching. */
export const AUDIT_CONCURRENCY = [1, 16] as const;
