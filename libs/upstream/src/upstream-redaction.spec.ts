import { McpError } from '@switchboard/core';
import type { ServerConfig } from '@switchboard/config';
import { describe, expect, it } from 'vitest';
import { HttpStatusError } from './transports/http-status-error.js';
import { BothTransportsFailed } from './transports/transport-factory.js';
import { credentialsOf, redactFailure, redactUpstreamError, type UpstreamRedactor } from './upstream-redaction.js';

/**
 * The audit log's redactor lives in a lib this one does not depend on (the e2e test in
 * test/hostile-upstream.e2e-spec.ts runs the real one); this one follows its contract: a
 * secret-named member's whole value becomes '[REDACTED]', `password=` in text is hidden.
 */
const redactor: UpstreamRedactor = {
  redact: (value) => {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.some(([k]) => /token|key/i.test(k)) ? Object.fromEntries(entries.map(([k, v]) => [k, /token|key/i.test(k) ? '[REDACTED]' : v])) : value;
  },
  redactText: (text) => text.replace(/password=\S+/g, 'password=[REDACTED:password]'),
};

const remote = (url: string, headers: Record<string, string>) => ({ transport: 'http', url, headers }) as unknown as ServerConfig;
const stdio = (env: Record<string, string>) => ({ transport: 'stdio', command: 'x', args: [], env }) as unknown as ServerConfig;

describe('credentialsOf', () => {
  it('takes every header value, the credential after an auth scheme, and the URL password', () => {
    const found = credentialsOf(remote('https://user:s3cr3t-pa55@mcp.example.com/mcp', { Authorization: 'Bearer abcdefgh12345', 'X-Team': 'platform-team' }), redactor);
    expect(found.sort()).toEqual(['Bearer abcdefgh12345', 'abcdefgh12345', 'platform-team', 's3cr3t-pa55'].sort());
  });

  it('takes the env values of a stdio server whose names are secret, not the others, nor short ones', () => {
    const found = credentialsOf(stdio({ GITHUB_TOKEN: 'ghp_aaaaaaaaaaaa', HOME_DIR: '/home/someone', NOTE: 'password=whatever', API_KEY: 'short' }), redactor);
    expect(found).toEqual(['ghp_aaaaaaaaaaaa']);
  });
});

describe('redactUpstreamError', () => {
  it('hides the credentials and what the rules call secret in the message; code and data stay', () => {
    const creds = credentialsOf(stdio({ SERVICE_KEY: 'k3y-0f-n0-shape' }), redactor);
    const data = { elicitations: [{ url: 'https://example.com/x' }] };
    const out = redactUpstreamError(new McpError(-32000, 'key k3y-0f-n0-shape refused; password=hunter2', data), creds, redactor);
    expect(out.message).toBe('key [REDACTED:upstream-credential] refused; password=[REDACTED:password]');
    expect(out.code).toBe(-32000);
    expect(out.data).toBe(data);
  });

  it('returns the error itself when nothing in it is secret', () => {
    const err = new McpError(-32602, 'Unknown tool: x');
    expect(redactUpstreamError(err, ['k3y-0f-n0-shape'], redactor)).toBe(err);
  });
});

describe('redactFailure of an HTTP upstream both transports refused', () => {
  it("words each part as its own failure: the upstream's text redacted, the gateway's advice kept", () => {
    // As the audit rules do, this one hides a bearer credential; the advice quotes one as config.
    const hidesBearer: UpstreamRedactor = { ...redactor, redactText: (text) => text.replace(/Bearer \S+/g, 'Bearer [REDACTED]') };
    const streamable = new HttpStatusError(404, 'Not Found', 'no route for Bearer abc123', 'give a token in headers (Authorization: "Bearer ${env:NAME}")');
    const text = redactFailure(new BothTransportsFailed(streamable, new Error('SSE error: Non-200 status code (404)')), [], hidesBearer);
    expect(text).toBe(
      'Streamable HTTP: upstream answered HTTP 404 Not Found: no route for Bearer [REDACTED]; give a token in headers (Authorization: "Bearer ${env:NAME}"); ' +
        'then legacy HTTP+SSE: SSE error: Non-200 status code (404)',
    );
  });
});
