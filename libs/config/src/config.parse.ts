import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { ConfigError, ConfigErrorCode } from './config.errors.js';
import { jsonErrorOffset, lineColumn } from './json-syntax.js';

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'file not found',
  EISDIR: 'is a directory, not a file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

export function readConfigBytes(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw unreadable(file, err);
  }
}

export function unreadable(file: string, err: unknown): ConfigError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const reason = READ_ERRORS[code] ?? (err instanceof Error ? err.message : String(err));
  return new ConfigError(ConfigErrorCode.Unreadable, file, [{ file, path: '', reason: `cannot read: ${reason}` }]);
}

/**
 * Bytes to a plain value. `.json` is strict JSON; anything else goes through YAML, which
 * also reads JSON, so a Claude Desktop file renamed to `.conf` still loads.
 */
export function parseConfigText(file: string, bytes: Buffer): unknown {
  // Windows editors save a BOM, which JSON.parse rejects as an unexpected token.
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  return extname(file).toLowerCase() === '.json' ? parseJson(file, text) : parseYaml(file, text);
}

function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const offset = jsonErrorOffset(text);
    // V8 appends the whole input ("..." is not valid JSON) and a raw offset; drop both.
    const detail = (err as Error).message
      .replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '')
      .replace(/(?: in JSON)? at position \d+.*$/s, '');
    const where = offset === undefined ? '' : ` at ${at(text, offset)}`;
    throw syntaxError(file, `JSON syntax error${where}: ${detail}`);
  }
}

function parseYaml(file: string, text: string): unknown {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  // Only the first: later YAML errors are nearly always knock-on effects of it.
  const first = doc.errors[0];
  if (first) {
    const pos = lines.linePos(first.pos[0]);
    throw syntaxError(file, `YAML syntax error at line ${pos.line}, column ${pos.col}: ${first.message}`);
  }
  try {
    return doc.toJS();
  } catch (err) {
    // e.g. too many alias expansions (the "billion laughs" guard).
    throw syntaxError(file, `YAML error: ${(err as Error).message}`);
  }
}

function at(text: string, offset: number): string {
  const { line, column } = lineColumn(text, offset);
  return `line ${line}, column ${column}`;
}

function syntaxError(file: string, reason: string): ConfigError {
  return new ConfigError(ConfigErrorCode.Syntax, file, [{ file, path: '', reason }]);
}
