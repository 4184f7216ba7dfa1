import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { statusError } from './http-status-error.js';

/** A response with this status, headers and body, as node:http hands it over. */
function response(statusCode: number, headers: Record<string, string>, body: string): IncomingMessage {
  const res = Object.assign(new PassThrough(), { statusCode, statusMessage: 'Unauthorized', headers, complete: true });
  res.end(body);
  return res as unknown as IncomingMessage;
}

describe('statusError', () => {
  it('says that a 401 with a Bearer challenge wants the OAuth sign-in Switchboard does not do, and what to give instead', async () => {
    const challenge = 'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"';
    const err = await statusError(response(401, { 'www-authenticate': challenge }, '{"error":"invalid_token"}'));
    expect(err.status).toBe(401);
    expect(err.message).toBe(
      'upstream answered HTTP 401 Unauthorized: {"error":"invalid_token"}; the server wants a bearer token, which hosts ' +
        'get by an OAuth sign-in that Switchboard does not do for its upstreams: give a valid token in headers ' +
        '(Authorization: "Bearer ${env:NAME}"), or ${secret:NAME} with isolation: per-principal',
    );
  });

  it('adds nothing to a 401 without a Bearer challenge, nor to other statuses', async () => {
    expect((await statusError(response(401, { 'www-authenticate': 'Basic realm="x"' }, ''))).message).toBe(
      'upstream answered HTTP 401 Unauthorized',
    );
    expect((await statusError(response(403, { 'www-authenticate': 'Bearer' }, 'no'))).message).toBe('upstream answered HTTP 403 Unauthorized: no');
  });
});
