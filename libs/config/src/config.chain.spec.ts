import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SERVING_CHAIN_VARIABLE, servingChainFor } from './config.chain.js';
import { ConfigError } from './config.errors.js';
import { loadConfig } from './config.loader.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sb-chain-')));
  file = join(dir, 'claude_desktop_config.json');
  writeFileSync(file, JSON.stringify({ mcpServers: { demo: { command: 'node' } } }));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the serving chain', () => {
  it("is the file for a Switchboard's upstreams, added to the chain it runs under", () => {
    expect(servingChainFor(file, {})).toEqual({ [SERVING_CHAIN_VARIABLE]: file });
    expect(servingChainFor(file, { [SERVING_CHAIN_VARIABLE]: '/etc/top.yaml' })).toEqual({
      [SERVING_CHAIN_VARIABLE]: `/etc/top.yaml${delimiter}${file}`,
    });
  });

  it('refuses a file that a Switchboard above this one already serves (it lists Switchboard as its own upstream)', () => {
    const link = join(dir, 'link.json');
    symlinkSync(file, link);
    const underItself = servingChainFor(link, servingChainFor('/etc/top.yaml', {}));
    let error: unknown;
    try {
      loadConfig(file, underItself);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      { file, path: '', reason: expect.stringMatching(/^lists Switchboard itself .* as an upstream/) },
    ]);
    // Under another file's Switchboard (a gateway in front of a gateway), it loads.
    expect(loadConfig(file, servingChainFor('/etc/top.yaml', {})).servers).toHaveLength(1);
  });
});
