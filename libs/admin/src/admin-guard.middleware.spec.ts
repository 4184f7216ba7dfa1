import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayConfig } from '@switchboard/config';
import { describe, expect, it, vi } from 'vitest';
import { AdminGuardMiddleware } from './admin-guard.middleware.js';
import { InboxAccess } from './inbox/inbox-access.js';
import { InboxSessions } from './inbox/inbox-sessions.js';

const config = {
  listen: { host: '127.0.0.1', port: 8780 },
  security: { allowedHosts: [], allowedOrigins: [] },
  auth: { mode: 'none', authorizationServers: [] },
} as unknown as GatewayConfig;

function fakeResponse() {
  const headers: Record<string, string> = {};
  let status = 0;
  let body = '';
  const res = {
    setHeader: (name: string, value: string) => (headers[name.toLowerCase()] = value),
    writeHead(code: number, more: Record<string, string>) {
      status = code;
      for (const [k, v] of Object.entries(more)) headers[k.toLowerCase()] = v;
      return res;
    },
    end: (text: string) => (body = text),
  };
  return { res: res as unknown as ServerResponse, headers, result: () => ({ status, body: body ? JSON.parse(body) : undefined }) };
}

async function run(headers: Record<string, string>) {
  const options = { config: () => config };
  const guard = new AdminGuardMiddleware(options, new InboxAccess(options, new InboxSessions()));
  const response = fakeResponse();
  const next = vi.fn();
  await guard.use({ headers } as IncomingMessage, response.res, next);
  return { ...response, next };
}

describe('AdminGuardMiddleware', () => {
  it('passes loopback requests on, marked no-store', async () => {
    const { next, headers } = await run({ host: '127.0.0.1:8780' });
    expect(next).toHaveBeenCalledOnce();
    expect(headers['cache-control']).toBe('no-store');
  });

  it.each([
    ['a foreign Host (DNS rebinding)', { host: 'evil.example:8780' }],
    ['a foreign Origin', { host: 'localhost:8780', origin: 'https://evil.example' }],
    ['no Host at all', {}],
  ])('refuses %s with a 403 JSON error', async (_, headers) => {
    const { next, result, headers: sent } = await run(headers);
    expect(next).not.toHaveBeenCalled();
    expect(result().status).toBe(403);
    expect(result().body.error.message).toMatch(/refused/);
    expect(sent['cache-control']).toBe('no-store');
  });
});
