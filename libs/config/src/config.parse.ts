import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { ConfigError, ConfigErrorCode, formatPath } from './config.errors.js';
import { jsonErrorOffset, jsonNestingOffset, lineColumn } from './json-syntax.js';
import { blankJsoncExtras } from './jsonc.js';

/**
 * How deeply a config or policy file may nest mappings and lists. The deepest real file
 * needs about ten; the limit keeps every later step (variable expansion, the schema, the
 * rules), which walks the value recursively, far from the call stack's end.
 */
export const MAX_NESTING = 64;

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
 * Bytes to a plain value. `.json` and `.jsonc` are JSON, with the comments and trailing
 * commas VS Code's mcp.json may have (YAML would read `{ // comment` as a key, not fail);
 * anything else goes through YAML, which also reads JSON, so a Claude Desktop file renamed
 * to `.conf` still loads. A value nested
 * deeper than MAX_NESTING, or containing itself (a YAML alias inside its own anchor), is
 * refused here with its path.
 */
export function parseConfigText(file: string, bytes: Buffer): unknown {
  // Windows editors save a BOM, which JSON.parse rejects as an unexpected token.
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  const json = ['.json', '.jsonc'].includes(extname(file).toLowerCase());
  const value = json ? parseJson(file, blankJsoncExtras(text)) : parseYaml(file, text);
  const problem = nestingProblem(value);
  if (problem) {
    throw new ConfigError(ConfigErrorCode.Invalid, file, [{ file, path: formatPath(problem.path), reason: problem.reason }]);
  }
  return value;
}

type Container = Record<PropertyKey, unknown> | unknown[];
const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;

/**
 * Where `root` nests a mapping or list deeper than MAX_NESTING (the root is level 1), or
 * contains itself; undefined when it does neither. Iterative, so any depth is safe to look at.
 */
export function nestingProblem(root: unknown): { path: PropertyKey[]; reason: string } | undefined {
  if (!isContainer(root)) return undefined;
  const frames: { node: Container; key: PropertyKey; children: Iterator<[PropertyKey, unknown]> }[] = [];
  const open = new Set<Container>();
  const enter = (node: Container, key: PropertyKey) => {
    frames.push({ node, key, children: (Array.isArray(node) ? node.entries() : Object.entries(node).values()) as Iterator<[PropertyKey, unknown]> });
    open.add(node);
  };
  const pathTo = (key: PropertyKey) => [...frames.slice(1).map((f) => f.key), key];
  enter(root, '');
  while (frames.length > 0) {
    const top = frames[frames.length - 1]!;
    const next = top.children.next();
    if (next.done) {
      open.delete(top.node);
      frames.pop();
      continue;
    }
    const [key, child] = next.value;
    if (!isContainer(child)) continue;
    if (open.has(child)) return { path: pathTo(key), reason: 'contains itself (a YAML alias inside its own anchor)' };
    if (frames.length >= MAX_NESTING) return { path: pathTo(key), reason: `nested deeper than ${MAX_NESTING} levels` };
    enter(child, key);
  }
  return undefined;
}

function parseJson(file: string, text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // The scanner that finds the position recurses per level: a deep file is refused for that first.
    const deep = jsonNestingOffset(text, MAX_NESTING);
    if (deep !== undefined) throw syntaxError(file, `JSON syntax error at ${at(text, deep)}: nested deeper than ${MAX_NESTING} levels`);
    const offset = jsonErrorOffset(text);
    // V8 appends the whole input ("..." is not valid JSON) and a raw offset; drop both.
    const detail = (err as Error).message
      .replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '')
      .replace(/(?: in JSON)? at position \d+.*$/s, '');
    const where = offset === undefined ? '' : ` at ${at(text, offset)}`;
    throw syntaxError(file, `JSON syntax error${where}: ${detail}`);
  }
  const duplicate = duplicateKeyOffset(text);
  if (duplicate !== undefined) {
    throw syntaxError(file, `JSON error at ${at(text, duplicate)}: a key appears twice in one object (JSON would keep only the last; two servers of one name?)`);
  }
  return value;
}

/**
 * Where valid JSON repeats a key within one object, which JSON.parse allows (the last one
 * wins) and which is nearly always two files pasted together. JSON is YAML, and the YAML
 * parser reports duplicate keys with their position; its other complaints about JSON text
 * are not ours to make.
 */
function duplicateKeyOffset(text: string): number | undefined {
  // A file nested past the limit is refused after this, by its depth; the YAML parser recurses.
  if (jsonNestingOffset(text, MAX_NESTING) !== undefined) return undefined;
  try {
    const duplicate = parseDocument(text, { prettyErrors: false, uniqueKeys: true }).errors.find((e) => e.code === 'DUPLICATE_KEY');
    return duplicate?.pos[0];
  } catch {
    return undefined;
  }
}

function parseYaml(file: string, text: string): unknown {
  const lines = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    // Merge keys (`<<: *common`), as docker-compose files use them to share env and args.
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, merge: true });
  } catch (err) {
    throw syntaxError(file, `YAML error: ${yamlFailure(err)}`);
  }
  // Only the first: later YAML errors are nearly always knock-on effects of it.
  const first = doc.errors[0];
  if (first) {
    const pos = lines.linePos(first.pos[0]);
    throw syntaxError(file, `YAML syntax error at line ${pos.line}, column ${pos.col}: ${yamlFailure(first)}`);
  }
  try {
    return doc.toJS();
  } catch (err) {
    // e.g. too many alias expansions (the "billion laughs" guard).
    throw syntaxError(file, `YAML error: ${yamlFailure(err)}`);
  }
}

/** The parser reports running out of stack (a file nested thousands deep) as its own error. */
function yamlFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return err instanceof RangeError || /maximum call stack/i.test(message) ? `nested deeper than ${MAX_NESTING} levels` : message;
}

function at(text: string, offset: number): string {
  const { line, column } = lineColumn(text, offset);
  return `line ${line}, column ${column}`;
}

function syntaxError(file: string, reason: string): ConfigError {
  return new ConfigError(ConfigErrorCode.Syntax, file, [{ file, path: '', reason }]);
}
