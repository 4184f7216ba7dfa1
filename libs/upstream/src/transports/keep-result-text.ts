import { memberSpan, rememberJsonText, type JsonRpcMessage } from '@switchboard/core';

/**
 * Results at least this long keep their text, so the downstream side copies it instead of
 * serializing the parsed object again (json-text.ts); below it, JSON.stringify is cheaper
 * than finding the boundaries.
 */
const PASS_THROUGH_MIN_CHARS = 4096;

/** Remembers the text of `message.result` when `json` (the text it was parsed from) is long. */
export function keepResultText(message: JsonRpcMessage, json: string): void {
  if (json.length < PASS_THROUGH_MIN_CHARS) return;
  if (!('result' in message) || typeof message.result !== 'object' || message.result === null) return;
  const span = memberSpan(json, 'result');
  if (!span) return;
  const text = json.slice(span[0], span[1]);
  // JSON may have line breaks between tokens (a pretty-printed body, an SSE event's data on
  // several lines); a string never holds a raw one. Passed on, one would split the message
  // on the host's side: an SSE data line, a stdio line. Such a result is serialized anew.
  if (text.includes('\n') || text.includes('\r')) return;
  rememberJsonText(message.result, text);
}
