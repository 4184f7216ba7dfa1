import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigWithWarnings } from '@switchboard/config';
import { loadPolicyBytes } from '@switchboard/policy';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// Users copy these blocks as they are, so each must be what the daemon takes: a config
// without problems or warnings (a renamed key would only warn), or a policy file.
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const documents = ['README.md', ...readdirSync(join(repoRoot, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** The top-level keys of a policy file; a block with only these is one. */
const POLICY_KEYS = new Set(['defaultEffect', 'roles', 'users', 'groups', 'everyone']);

interface YamlBlock {
  where: string;
  text: string;
}

/** Every ```yaml block of a Markdown file, dedented by its fence's indentation (a block inside a list item). */
function yamlBlocks(document: string): YamlBlock[] {
  const lines = readFileSync(join(repoRoot, document), 'utf8').split('\n');
  const blocks: YamlBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```ya?ml\s*$/.exec(lines[i]);
    if (!fence) continue;
    const indent = fence[1];
    const start = i;
    const body: string[] = [];
    while (++i < lines.length && lines[i].trim() !== '```') body.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i]);
    blocks.push({ where: `${document}:${start + 1}`, text: `${body.join('\n')}\n` });
  }
  return blocks;
}

/** A value for every variable the block names, as the environment would give. */
function envFor(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => [match[1], 'value']));
}

const blocks = documents.flatMap(yamlBlocks);
const scratch = mkdtempSync(join(tmpdir(), 'docs-examples-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the ```yaml blocks of README.md and docs/', () => {
  it('are found', () => {
    expect(blocks.length).toBeGreaterThan(10);
  });

  it.each(blocks.map((block) => [block.where, block] as const))('%s is a valid config or policy file', (where, block) => {
    const keys = Object.keys((parse(block.text) as Record<string, unknown> | null) ?? {});
    if (keys.length > 0 && keys.every((key) => POLICY_KEYS.has(key))) {
      expect(() => loadPolicyBytes(where, Buffer.from(block.text))).not.toThrow();
      return;
    }
    const file = join(scratch, `${where.replace(/[/:.]/g, '_')}.yaml`);
    writeFileSync(file, block.text);
    const { warnings } = loadConfigWithWarnings(file, envFor(block.text));
    expect(warnings).toEqual([]);
  });
});
