import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, ConfigErrorCode } from './config.errors.js';
import { loadConfig } from './config.loader.js';
import { MAX_NESTING, nestingProblem, parseConfigText } from './config.parse.js';
import { jsonNestingOffset } from './json-syntax.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-config-parse-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function refusal(name: string, text: string): ConfigError {
  const file = join(dir, name);
  writeFileSync(file, text);
  try {
    loadConfig(file, {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

/** `{"a":{"a":...{"a":"x"}}}` with `levels` mappings. */
const nestedJson = (levels: number) => `${'{"a":'.repeat(levels)}"x"${'}'.repeat(levels)}`;

describe('JSON with comments (VS Code mcp.json)', () => {
  it('loads comments and trailing commas from .json and .jsonc, and reports a later error where it is in the file', () => {
    const text = '{\n  // workspace servers\n  "servers": {\n    "demo": { "type": "stdio", "command": "node", }, /* local */\n  },\n}\n';
    for (const name of ['mcp.json', 'mcp.jsonc']) {
      writeFileSync(join(dir, name), text);
      expect(loadConfig(join(dir, name), {}).servers.map((s) => s.name)).toEqual(['demo']);
    }
    const broken = refusal('broken.json', '{\n  // comment\n  "servers": { "a" 1 }\n}');
    expect(broken.problems[0]!.reason).toMatch(/^JSON syntax error at line 3, column 20: /);
  });
});

describe('keys and merge keys', () => {
  it('refuses a JSON file with a key twice in one object (JSON.parse would keep the last), with where', () => {
    const file = join(dir, 'mcp.json');
    writeFileSync(file, '{"mcpServers": {\n  "a": {"command": "node"},\n  "a": {"command": "python"}\n}}\n');
    expect(() => parseConfigText(file, readFileSync(file))).toThrow(/line 3, column 3: a key appears twice in one object/);
    // The same name in different objects is no duplicate.
    writeFileSync(file, '{"mcpServers": {"a": {"command": "node", "env": {"a": "1"}}}}');
    expect(parseConfigText(file, readFileSync(file))).toEqual({ mcpServers: { a: { command: 'node', env: { a: '1' } } } });
  });

  it('reads YAML merge keys (<<: *anchor), as docker-compose files use them', () => {
    const file = join(dir, 'sb.yaml');
    writeFileSync(file, 'x-common: &common {env: {TOKEN: abc}, cwd: /srv}\nmcpServers:\n  gh: {<<: *common, command: node, cwd: /home}\n');
    expect(parseConfigText(file, readFileSync(file))).toMatchObject({ mcpServers: { gh: { env: { TOKEN: 'abc' }, command: 'node', cwd: '/home' } } });
  });
});

describe('nesting limit', () => {
  it(`refuses a JSON config nested thousands deep with the path, where the server fields are expanded`, () => {
    const error = refusal('deep.json', `{"mcpServers":{"s":{"command":"node","env":${nestedJson(200_000)}}}}`);
    expect(error.code).toBe(ConfigErrorCode.Invalid);
    // The root, mcpServers, s and env are four levels: 60 more `a`, the 61st is one too many.
    expect(error.problems).toEqual([
      { file: join(dir, 'deep.json'), path: `mcpServers.s.env${'.a'.repeat(61)}`, reason: `nested deeper than ${MAX_NESTING} levels` },
    ]);
    expect(error.message).not.toContain('call stack');
  });

  it('accepts exactly the limit', () => {
    expect(nestingProblem(JSON.parse(nestedJson(MAX_NESTING)))).toBeUndefined();
    expect(nestingProblem(JSON.parse(nestedJson(MAX_NESTING + 1)))).toEqual({
      path: Array(MAX_NESTING).fill('a'),
      reason: `nested deeper than ${MAX_NESTING} levels`,
    });
    expect(nestingProblem([[[]]])).toBeUndefined();
    expect(nestingProblem('scalar')).toBeUndefined();
  });

  it('counts lists as levels too, and names their indexes', () => {
    const deep = `${'['.repeat(MAX_NESTING + 5)}${']'.repeat(MAX_NESTING + 5)}`;
    const problem = nestingProblem(JSON.parse(deep));
    expect(problem?.path).toEqual(Array(MAX_NESTING).fill(0));
  });

  it('refuses a deep JSON file that is also invalid, without recursing through it', () => {
    const error = refusal('bad.json', `{"mcpServers":${'['.repeat(500_000)}`);
    expect(error.code).toBe(ConfigErrorCode.Syntax);
    expect(error.problems[0]!.reason).toBe(`JSON syntax error at line 1, column ${15 + MAX_NESTING - 1}: nested deeper than ${MAX_NESTING} levels`);
  });

  it('refuses a deep YAML file: with the path when the parser copes, as a syntax error when it does not', () => {
    const shallow = refusal('deep.yaml', `mcpServers:\n  s:\n    command: node\n    env: ${'['.repeat(100)}${']'.repeat(100)}\n`);
    expect(shallow.problems).toEqual([
      expect.objectContaining({ path: `mcpServers.s.env${'.0'.repeat(61)}`, reason: `nested deeper than ${MAX_NESTING} levels` }),
    ]);

    const deep = refusal('deeper.yaml', `mcpServers: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`);
    expect(deep.code).toBe(ConfigErrorCode.Syntax);
    expect(deep.problems[0]!.reason).toMatch(new RegExp(`^YAML syntax error at line 1, column \\d+: nested deeper than ${MAX_NESTING} levels$`));
  });

  it('refuses a YAML value that contains itself (an alias inside its own anchor)', () => {
    const error = refusal('loop.yaml', 'mcpServers:\n  s:\n    command: node\n    args: &loop [a, *loop]\n');
    expect(error.problems).toEqual([
      expect.objectContaining({ path: 'mcpServers.s.args.1', reason: 'contains itself (a YAML alias inside its own anchor)' }),
    ]);
  });

  it('lets a value shared through an alias, but not containing itself, through', () => {
    const value = parseConfigText('x.yaml', Buffer.from('a: &shared { k: [1] }\nb: *shared\nc: [*shared, *shared]\n'));
    expect(value).toEqual({ a: { k: [1] }, b: { k: [1] }, c: [{ k: [1] }, { k: [1] }] });
  });
});

describe('jsonNestingOffset', () => {
  it('finds the first bracket past the limit, ignoring brackets in strings', () => {
    expect(jsonNestingOffset('[[["x"]]]', 3)).toBeUndefined();
    expect(jsonNestingOffset('[[[["x"]]]]', 3)).toBe(3);
    expect(jsonNestingOffset('["[[[[", {"k\\"[[": [1]}]', 3)).toBeUndefined();
    expect(jsonNestingOffset('["[[[[", {"k\\"[[": [1]}]', 2)).toBe(19);
    expect(jsonNestingOffset('[{}, {}, [{}]]', 2)).toBe(10);
  });
});
