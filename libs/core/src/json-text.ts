import type { JsonRpcMessage } from './jsonrpc.js';

/**
 * The JSON text a result object was parsed from (or already serialized to). Encoding such a
 * result again is then a string copy instead of a walk over every value: a 1 MiB tool result
 * costs the gateway one JSON.parse (to validate and route it) and no JSON.stringify.
 *
 * The relay treats results as immutable: whatever changes one (URI mapping, say) builds a new
 * object, which has no entry here and is serialized normally. A WeakMap, so the text lives
 * exactly as long as the object.
 */
const texts = new WeakMap<object, string>();

export function rememberJsonText(value: object, text: string): void {
  texts.set(value, text);
}

/**
 * The JSON text of a result: the remembered one, or serialized now and remembered, so the
 * encoder that sends it does not serialize it a second time (the audit log measures it).
 */
export function jsonTextOf(value: object): string {
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    texts.set(value, text);
  }
  return text;
}

/** One message as JSON text, splicing in a remembered result text when there is one. */
export function encodeMessage(message: JsonRpcMessage): string {
  if ('result' in message && typeof message.result === 'object' && message.result !== null) {
    const text = texts.get(message.result);
    if (text !== undefined) return `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${text}}`;
  }
  return JSON.stringify(message);
}

export function encodeBatch(messages: readonly JsonRpcMessage[]): string {
  return `[${messages.map(encodeMessage).join(',')}]`;
}

/**
 * Where the value of a top-level member lies in the text of a JSON object, as [start, end);
 * undefined when the object has no such member. The text must be valid JSON (JSON.parse has
 * already accepted it), so this only finds boundaries: it reads structure character by
 * character but jumps over string contents with indexOf, which keeps a megabyte of text
 * cheap to skip. A key spelled with escapes is not recognised; the caller then simply
 * serializes as usual.
 */
export function memberSpan(text: string, key: string): [number, number] | undefined {
  const quotedKey = `"${key}"`;
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i = skipSpace(text, i + 1);
  while (text.charCodeAt(i) === QUOTE) {
    const keyEnd = stringEnd(text, i);
    const isKey = keyEnd - i === quotedKey.length && text.startsWith(quotedKey, i);
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    const start = skipSpace(text, i + 1);
    const end = valueEnd(text, start);
    if (isKey) return [start, end];
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
  return undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const COLON = 0x3a;
const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

function skipSpace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** Just past the string whose opening quote is at `start`. */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Just past the value that starts at `start`. */
function valueEnd(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return stringEnd(text, start);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) i = stringEnd(text, i) - 1;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
    }
    return text.length;
  }
  // A number, true, false or null: up to the next delimiter.
  let i = start;
  for (;;) {
    const c = text.charCodeAt(i);
    if (Number.isNaN(c) || c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) return i;
    i++;
  }
}
