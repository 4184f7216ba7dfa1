import type { Logger } from '@switchboard/observability';

/** The capabilities through which an upstream offers hosts anything: what the catalog reads lists of. */
const SERVING_CAPABILITIES = ['tools', 'resources', 'prompts'] as const;

export const SERVES_NOTHING_WARNING = 'declared no tools, resources or prompts capability: it serves none of them';

/**
 * What /readyz (status().warning) says of an upstream's declared capabilities, or undefined.
 * One that declared none of tools, resources or prompts is connected and healthy, and
 * serves hosts nothing (the catalog reads no list of it): a config pointing at the wrong
 * server, or a server started without its features, looked like every other `ready` one.
 * It stays ready: a server with only completions or logging is legal.
 */
export function capabilityWarning(capabilities: Record<string, unknown>): string | undefined {
  return SERVING_CAPABILITIES.some((c) => capabilities[c]) ? undefined : SERVES_NOTHING_WARNING;
}

/** Logs a warning at connect when it differs from the one before (a reconnect repeats none). */
export function logCapabilityWarning(warning: string | undefined, previous: string | undefined, log: Logger): void {
  if (warning !== undefined && warning !== previous) log.warn(`upstream ${warning}`);
}
