import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayConfig } from '@switchboard/config';
import { describe, expect, it, vi } from 'vitest';
import { isLoopbackHost } from '@switchboard/core';
import { admitted, refusedForeign, refuseReason, type HttpRefusal } from './request-guard.js';

const config = (host: string, allowedHosts: string[] = [], allowedOrigins: string[] = []) =>
  ({ listen: { host, port: 8780 }, security: { allowedHosts, allowedOrigins } }) as unknown as GatewayConfig;
const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('refuseReason (Host and Origin)', () => {
  it('on loopback, takes loopback hosts and origins only', () => {
    const loopback = config('127.0.0.1');
    expect(refuseReason(req({ host: '127.0.0.1:8780', origin: 'http://localhost:5173' }), loopback)).toBeUndefined();
    expect(refuseReason(req({ host: 'evil.example:8780' }), loopback)).toBe("Host 'evil.example:8780' is not allowed");
    expect(refuseReason(req({ host: '127.0.0.1:8780', origin: 'https://evil.example' }), loopback)).toBe("Origin 'https://evil.example' is not allowed");
  });

  it('refuses a Host header that is not a host name and port, whatever name it starts with', () => {
    const loopback = config('127.0.0.1');
    for (const host of ['127.0.0.1:80@evil.example', '127.0.0.1:8780/x', '[::1]evil', 'localhost:80:80', '127.0.0.1 evil', '127.0.0.1:']) {
      expect(refuseReason(req({ host }), loopback), host).toBe(`Host '${host}' is not a host name and port`);
    }
    for (const host of ['127.0.0.1', '127.0.0.1:8780', 'localhost:8780', '[::1]:8780', '[::1]']) {
      expect(refuseReason(req({ host }), loopback), host).toBeUndefined();
    }
  });

  it('counts 127/8 addresses as loopback, not DNS names that begin with 127.', () => {
    expect(['localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]'].filter(isLoopbackHost)).toHaveLength(5);
    expect(['127.evil.example', '127.0.0.1.nip.io', '127.0.0.1.', 'localhost.evil.example', '128.0.0.1'].filter(isLoopbackHost)).toEqual([]);
    const loopback = config('127.0.0.1');
    expect(refuseReason(req({ host: '127.evil.example:8780' }), loopback)).toBe("Host '127.evil.example:8780' is not allowed");
    expect(refuseReason(req({ host: '127.0.0.1:8780', origin: 'https://127.0.0.1.evil.example' }), loopback)).toBe(
      "Origin 'https://127.0.0.1.evil.example' is not allowed",
    );
  });

  it("off loopback, takes the page's own origin on a listed Host, and listed origins", () => {
    const team = config('0.0.0.0', ['gateway.example.com'], ['https://tools.example.com']);
    expect(refuseReason(req({ host: 'gateway.example.com:8780', origin: 'http://gateway.example.com:8780' }), team)).toBeUndefined();
    expect(refuseReason(req({ host: 'gateway.example.com', origin: 'https://tools.example.com' }), team)).toBeUndefined();
    expect(refuseReason(req({ host: 'gateway.example.com', origin: 'https://evil.example' }), team)).toBe("Origin 'https://evil.example' is not allowed");
  });

  it('off loopback without a Host list, a Host cannot vouch for its own Origin', () => {
    const open = config('0.0.0.0');
    expect(refuseReason(req({ host: 'rebound.example:8780' }), open)).toBeUndefined();
    expect(refuseReason(req({ host: 'rebound.example:8780', origin: 'http://rebound.example:8780' }), open)).toBe(
      "Origin 'http://rebound.example:8780' is not allowed",
    );
  });
});

describe('refusedForeign: the one refusal of a foreign Host or Origin', () => {
  const loopback = config('127.0.0.1');
  const request = (headers: Record<string, string>) =>
    ({ headers, method: 'POST', url: '/mcp?sessionId=secret', socket: { remoteAddress: '127.0.0.1' } }) as unknown as IncomingMessage;
  const res = {} as ServerResponse;

  const unlistedHost = { setting: 'security.allowedHosts', value: 'evil.example' } as const;
  const unlistedOrigin = { setting: 'security.allowedOrigins', value: 'https://evil.example' } as const;
  it.each([
    ['a foreign Host', { host: 'evil.example' }, 'security:host', "Host 'evil.example' is not allowed", unlistedHost],
    ['a foreign Origin', { host: '127.0.0.1:8780', origin: 'https://evil.example' }, 'security:origin', "Origin 'https://evil.example' is not allowed", unlistedOrigin],
    ['no Host', {}, 'security:host', 'missing Host header', undefined],
    ['a Host that is no host name', { host: 'a@evil.example' }, 'security:host', "Host 'a@evil.example' is not a host name and port", undefined],
    ['an Origin that is no URL', { host: '127.0.0.1:8780', origin: 'null' }, 'security:origin', "Origin 'null' is not a valid origin", undefined],
  ])('%s: tells the listener (one refused row, the path without its query; the setting that would admit it, when one would) and answers 403 in the caller\'s format', (_, headers, rule, reason, unlisted) => {
    const onRefused = vi.fn<(refusal: HttpRefusal) => void>();
    const answer = vi.fn();
    expect(refusedForeign(request(headers), res, loopback, onRefused, answer)).toBe(true);
    const refusal = { httpMethod: 'POST', path: '/mcp', decision: 'refused', rule, reason, address: '127.0.0.1' };
    expect(onRefused.mock.calls).toEqual([[unlisted ? { ...refusal, unlisted } : refusal]]);
    expect(answer.mock.calls).toEqual([[res, 403, reason]]);
  });

  it('lets a loopback request through untold and unanswered; without a listener (audit off) a refusal is still answered', () => {
    const answer = vi.fn();
    const onRefused = vi.fn();
    expect(refusedForeign(request({ host: 'localhost:8780', origin: 'http://localhost:6274' }), res, loopback, onRefused, answer)).toBe(false);
    expect([onRefused.mock.calls, answer.mock.calls]).toEqual([[], []]);
    expect(refusedForeign(request({ host: 'evil.example' }), res, loopback, undefined, answer)).toBe(true);
    expect(answer).toHaveBeenCalledOnce();
  });

  it('admitted, for the MCP endpoints, answers it as a JSON-RPC error', () => {
    let sent: { status?: number; body?: string } = {};
    const jsonRes = {
      headersSent: false,
      writeHead: (status: number) => (sent = { ...sent, status }),
      end: (body: string) => (sent = { ...sent, body }),
    } as unknown as ServerResponse;
    expect(admitted(request({ host: 'evil.example' }), jsonRes, loopback, undefined)).toBe(false);
    expect(sent.status).toBe(403);
    expect(JSON.parse(sent.body!)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: "Forbidden: Host 'evil.example' is not allowed" } });
  });
});
