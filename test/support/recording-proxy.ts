import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';

/** Forwards to an upstream and keeps the headers of every request it forwarded. */
export async function recordingProxy(target: string): Promise<{ url: string; seen: IncomingHttpHeaders[]; server: Server }> {
  const seen: IncomingHttpHeaders[] = [];
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const forwarded = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${upstream.pathname}`, seen, server };
}

/** That no request the proxy forwarded carried the caller's credential, in any header. */
export function expectNoCredentialIn(seen: readonly IncomingHttpHeaders[], credential: string): void {
  for (const headers of seen) {
    expect(headers.authorization).toBeUndefined();
    expect(headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(headers)).not.toContain(credential);
  }
}
