import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfigPath, loadConfigBytes, loadConfigWithWarnings } from './config.loader.js';
import { configJsonSchema } from './config.schema.js';
import { secretNamesOf } from './config.secrets.js';

// The shipped files under config/, next to default.yaml.
const configDir = dirname(defaultConfigPath());
const repoRoot = dirname(configDir);

describe('config/default.yaml', () => {
  it('is found relative to the module, and loads without warnings', () => {
    expect(defaultConfigPath()).toBe(join(repoRoot, 'config', 'default.yaml'));
    const { config, warnings } = loadConfigWithWarnings(defaultConfigPath(), {});
    expect(warnings).toEqual([]);
    expect(config.source).toBe(defaultConfigPath());
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 8780 });
    expect(config.dataDir).toBe(join(repoRoot, 'data'));
    expect(config.namespace).toBe('prefix');
    expect(config.servers).toEqual([
      expect.objectContaining({
        name: 'demo',
        transport: 'stdio',
        command: 'node',
        args: ['apps/demo-upstream/dist/main.js'],
        cwd: repoRoot,
        enabled: true,
      }),
    ]);
  });
});

describe('config/example.yaml', () => {
  const env = { HOME: '/home/someone', SEARCH_PORT: '9000', SEARCH_API_KEY: 'k' };

  it('loads without problems or warnings', () => {
    const { config, warnings } = loadConfigWithWarnings(join(configDir, 'example.yaml'), env);
    expect(warnings).toEqual([]);
    expect(config.servers.map((s) => [s.name, s.transport, s.enabled])).toEqual([
      ['files', 'stdio', true],
      ['github', 'http', true],
      ['legacy-search', 'sse', true],
      ['scratch', 'stdio', false],
    ]);
    expect(config.servers[1]).toMatchObject({ isolation: 'per-principal', namespace: 'auto' });
    expect(secretNamesOf(config.servers[1])).toEqual(['GITHUB_TOKEN']);
  });

  it('loads with each commented-out key uncommented, children and all', () => {
    const file = join(configDir, 'example.yaml');
    const lines = readFileSync(file, 'utf8').split('\n');
    // A commented key is `# key:` with its children below as `#   child: ...`, so that
    // deleting the `# ` of the block leaves valid YAML at the right indentation.
    const starts = lines.flatMap((line, i) => (/^\s*# [A-Za-z]+:(\s|$)/.test(line) && /^\s*#   \S/.test(lines[i + 1] ?? '') ? [i] : []));
    expect(starts.map((i) => lines[i].trim())).toEqual([expect.stringMatching(/^# jwt:/), '# policy:', '# rateLimits:']);
    for (const start of starts) {
      const indent = /^\s*/.exec(lines[start])![0];
      const block = [start];
      while (lines[block.at(-1)! + 1]?.startsWith(`${indent}#   `)) block.push(block.at(-1)! + 1);
      const uncommented = lines.map((line, i) => (block.includes(i) ? indent + line.slice(indent.length + 2) : line)).join('\n');
      const { config, warnings } = loadConfigBytes(file, Buffer.from(uncommented), env);
      expect(warnings, lines[start]).toEqual([]);
      expect(config.servers).toHaveLength(4);
    }
  });

  it('names every key the schema knows', () => {
    const text = readFileSync(join(configDir, 'example.yaml'), 'utf8');
    const schema = configJsonSchema() as JsonSchema;
    const server = schema.$defs!['SwitchboardServer']!;
    const keys = [...Object.keys(schema.properties!), ...Object.keys(server.properties!)];
    // `$schema` appears as the yaml-language-server comment, `servers` as the synonym a comment names.
    for (const key of keys) expect(text).toMatch(new RegExp(`(?<![A-Za-z])${key.replace('$', '\\$')}[:=]`));
  });
});

describe('config/switchboard.service', () => {
  it('runs the daemon as npm start does, with node itself as the process the manager signals', () => {
    const unit = readFileSync(join(configDir, 'switchboard.service'), 'utf8');
    const start = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const execStart = /^ExecStart=(\S+) (.*)$/m.exec(unit);
    expect(execStart?.[1]).toMatch(/\/node$/);
    expect(`node ${execStart?.[2]}`).toBe(start);
    expect(unit).toMatch(/^KillMode=mixed$/m);
    // The CLI's exit status for a refused config or command line (cli.ts).
    expect(unit).toMatch(/^RestartPreventExitStatus=2$/m);
  });
});

interface JsonSchema {
  properties?: Record<string, unknown>;
  $defs?: Record<string, { properties?: Record<string, unknown> }>;
}

describe('config/switchboard.schema.json', () => {
  it('is what configJsonSchema() generates (regenerate it when the schema changes)', () => {
    const committed: unknown = JSON.parse(readFileSync(join(configDir, 'switchboard.schema.json'), 'utf8'));
    expect(committed).toEqual(configJsonSchema());
  });
});
