/**
 * A command given as an argv array (an exec tool's `{"command": ["mysql", "-u", "root",
 * "-pS3cr3t"]}`). Some value patterns follow a command's name to a secret in a later word
 * (`mysql … -p<password>`, `aws configure set <name> <value>`), and a walk that scans one item
 * at a time shows them `-pS3cr3t` without its `mysql`. So an array that names such a command
 * is also read as the one command line it stands for, and what is found there is hidden in
 * the item it lies in: the array keeps its length, and each item its place.
 */
import type { Span } from './percent-decoding.js';

/** A path to a command is rarely longer: a longer item is not looked up. */
const MAX_COMMAND_ITEM = 256;
/**
 * Blanks and ';', '&', '|' inside an item become this in the line: an item is one word of the
 * command whatever it holds, so a password with a space is hidden whole (a pattern's bare
 * value stops at a blank), and a `-e "select 1;"` does not end the command before its `-p`.
 * One character for one, so that positions in the line map back to the items.
 */
const BLANK_IN_ITEM = '\u0000';
const ENDS_A_WORD = /[\s;&|]/g;

/**
 * An item as one word of the line. Most items hold no blank: a look at each character (every
 * one ENDS_A_WORD matches is a control, a space, ';', '&', '|' or past ASCII) spares them the
 * replace, which costs some 60 ns even when it finds nothing.
 */
function asOneWord(item: string): string {
  for (let i = 0; i < item.length; i++) {
    const code = item.charCodeAt(i);
    if (code <= 0x20 || code === 0x3b || code === 0x26 || code === 0x7c || code >= 0x80) return item.replace(ENDS_A_WORD, BLANK_IN_ITEM);
  }
  return item;
}

/**
 * Whether an item is one of `commands`, by its name or path (`/usr/bin/mysql`,
 * `C:\…\dotnet.exe`). Every string item of every array is asked, so the path's separator is
 * looked for by hand: two lastIndexOf calls cost some 100 ns on a short item, this loop a few.
 */
function namesCommand(item: string, commands: ReadonlySet<string>): boolean {
  if (item.length > MAX_COMMAND_ITEM) return false;
  if (commands.has(item)) return true;
  let nameStart = item.length;
  while (nameStart > 0 && !isPathSeparator(item.charCodeAt(nameStart - 1))) nameStart--;
  // endsWith costs more than a look at the last character, which rules out most items.
  const exe = item.charCodeAt(item.length - 1) === 0x65 && item.endsWith('.exe');
  if (nameStart === 0 && !exe) return false;
  return commands.has(item.slice(nameStart, exe ? -4 : undefined));
}

function isPathSeparator(code: number): boolean {
  return code === 0x2f || code === 0x5c; // '/', '\\'
}

/**
 * An item as a word of the line. A boolean or a null is the word it is written as (JSON's
 * `["mysql", "-pX", "--compress", true]`); an object or an array takes one character's place
 * that no pattern reads as a value, so it neither ends the line nor hides what follows it.
 */
function wordOf(item: unknown): string {
  if (typeof item === 'string') return asOneWord(item);
  if (typeof item === 'object' && item !== null) return BLANK_IN_ITEM;
  return String(item);
}

/** Only a string or a number is text to hide a secret in; any other item keeps its value. */
function holdsText(item: unknown): item is string | number {
  return typeof item === 'string' || typeof item === 'number';
}

/**
 * What `find` reports in the command line that `items` stand for, as spans within each
 * string or number item (by its index), or undefined when the array names none of `commands`
 * (by name or path) or nothing is found. `find`'s spans come in order and do not overlap. A
 * span that crosses items is split among them, each part with the marker.
 */
export function secretsInArgv(items: readonly unknown[], commands: ReadonlySet<string>, find: (line: string) => Span[]): Map<number, Span[]> | undefined {
  let command = false;
  for (const item of items) {
    if (typeof item === 'string' && namesCommand(item, commands)) {
      command = true;
      break;
    }
  }
  if (!command) return undefined;
  const words = items.map(wordOf);
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = 0, at = 0; i < words.length; at += words[i].length + 1, i++) {
    starts.push(at);
    ends.push(at + words[i].length);
  }
  const spans = find(words.join(' '));
  if (spans.length === 0) return undefined;
  const found = new Map<number, Span[]>();
  // Spans come in order and do not overlap: one pass over the items places them all.
  let first = 0;
  for (const span of spans) {
    while (first < items.length && ends[first] <= span.start) first++;
    for (let i = first; i < items.length && starts[i] < span.end; i++) {
      if (!holdsText(items[i])) continue;
      const start = Math.max(span.start, starts[i]) - starts[i];
      const end = Math.min(span.end, ends[i]) - starts[i];
      if (end <= start) continue;
      let inItem = found.get(i);
      if (inItem === undefined) found.set(i, (inItem = []));
      inItem.push({ start, end, marker: span.marker });
    }
  }
  return found;
}

/**
 * An item with the spans the line showed hidden, and the text between them redacted as any
 * string is (what the item holds on its own: a Bearer token, a percent-escaped secret).
 */
export function hideInItem(item: string | number, spans: readonly Span[], redactText: (text: string) => string): string {
  const text = String(item);
  let out = '';
  let copied = 0;
  for (const span of spans) {
    out += redactText(text.slice(copied, span.start)) + span.marker;
    copied = span.end;
  }
  return out + redactText(text.slice(copied));
}
