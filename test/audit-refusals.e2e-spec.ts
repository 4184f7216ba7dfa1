import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, type AuditRowRecord } from './support/audit-rows.js';
import { SWITCHBOARD_BIN, eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';

/**
 * Every refusal writes exactly one audit row, with what is known at that point and nothing
 * the caller sent as a secret: the paths an auditor would look for after a refusal, on the
 * transports where they differ (docs/audit.md, "What is recorded").
 */

afterAll(stopAllDaemons);

function cli(configPath: string, args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [SWITCHBOARD_BIN, ...args, '--config', configPath], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Polls until exactly the rows `where` picks have appeared (at least `count`), then returns them all. */
async function rowsOnceThere(dataDir: string, where: string, ...params: unknown[]): Promise<AuditRowRecord[]> {
  return eventually(() => {
    const found = auditRows(dataDir, where, ...params);
    return found.length > 0 ? found : undefined;
  }, 15_000, `rows where ${where}`);
}

describe('HTTP refusals of a credential (auth.mode: required)', () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  let key: string;

  beforeAll(async () => {
    const dir = tempDir('sb-refusals-');
    dataDir = join(dir, 'data');
    const configPath = writeConfig({ auth: { mode: 'required' }, mcpServers: { fx: stdioFixture() } }, dir);
    const made = cli(configPath, ['keys', 'create', '--name', 'http-hal']);
    key = made.stdout.trimEnd().split('\n').at(-1)!;
    daemon = await startDaemon(configPath);
  });

  const post = (headers: Record<string, string>) =>
    fetch(daemon.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fx__echo', arguments: {} } }),
    });

  it.each([
    ['two credentials', 'auth:two-credentials', () => ({ authorization: `Bearer ${key}`, 'x-api-key': key })],
    ['an empty X-API-Key', 'auth:malformed', () => ({ 'x-api-key': ' ' })],
  ])('%s: one row, whose message is the one the caller got, not mangled by the redaction of credentials', async (_what, rule, headers) => {
    const res = await post(headers());
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { message: string } };
    const rows = await rowsOnceThere(dataDir, `rule = ?`, rule);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ principal: 'anonymous', auth_method: 'none', method: 'http', name: 'POST /mcp', decision: 'unauthenticated', error_code: -32600 });
    expect(error.message).toBe(`Bad Request: ${String(rows[0].error_message)}`);
    expect(String(rows[0].error_message)).not.toContain('REDACTED');
  });
});
