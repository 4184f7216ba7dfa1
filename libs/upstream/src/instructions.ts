import type { Logger } from '@switchboard/observability';

/**
 * The most of an upstream's `instructions` served. They go, merged, into every host's
 * initialize result, and hosts put them into their model's context: a few paragraphs in
 * practice, where 30 MB from one upstream cost every session 30 MB and would fill any
 * model's context, taking every other upstream's tools down with it.
 */
export const MAX_INSTRUCTIONS_CHARS = 16 * 1024;

/** An upstream's instructions as hosts get them: cut at MAX_INSTRUCTIONS_CHARS, saying so. */
export function servedInstructions(text: string, log: Logger): string {
  if (text.length <= MAX_INSTRUCTIONS_CHARS) return text;
  const cut = text.length - MAX_INSTRUCTIONS_CHARS;
  log.warn(
    { chars: text.length, limit: MAX_INSTRUCTIONS_CHARS },
    `upstream instructions are longer than ${MAX_INSTRUCTIONS_CHARS} characters; only their start is served`,
  );
  return `${text.slice(0, MAX_INSTRUCTIONS_CHARS)}… [${cut} more characters not served]`;
}
