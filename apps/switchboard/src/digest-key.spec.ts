import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIGEST_KEY_FILE, SECRETS_KEY_FILE, loadDigestKey, loadSecretsKey } from './digest-key.js';

describe('loadDigestKey', () => {
  it('creates a private 32-byte key once and returns the same key after', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-key-'));
    const key = loadDigestKey(dir);
    expect(key).toHaveLength(32);
    expect(statSync(join(dir, DIGEST_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(loadDigestKey(dir).equals(key)).toBe(true);
    expect(readdirSync(dir)).toEqual([DIGEST_KEY_FILE]); // no temporary file left behind
  });

  it('processes racing on a fresh data dir all get the same key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-key-race-'));
    // Compiled module: a child process cannot load TypeScript (npm test builds first).
    const module = new URL('../dist/digest-key.js', import.meta.url).href;
    const script = `const m = await import(${JSON.stringify(module)}); process.stdout.write(m.loadDigestKey(${JSON.stringify(dir)}).toString('hex'))`;
    const keys = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
            let out = '';
            let err = '';
            child.stdout.on('data', (c: Buffer) => (out += c.toString()));
            child.stderr.on('data', (c: Buffer) => (err += c.toString()));
            child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}: ${err}`))));
          }),
      ),
    );
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(keys).size).toBe(1);
  });
});

describe('loadSecretsKey', () => {
  it('keeps its own private key file beside the digest key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-key-secrets-'));
    const secrets = loadSecretsKey(dir);
    expect(secrets).toHaveLength(32);
    expect(statSync(join(dir, SECRETS_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(loadDigestKey(dir).equals(secrets)).toBe(false);
    expect(loadSecretsKey(dir).equals(secrets)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual([DIGEST_KEY_FILE, SECRETS_KEY_FILE].sort());
  });
});
