import { request as httpRequest, type IncomingMessage } from 'node:http';

export interface OpenStream {
  status: number;
  headers: IncomingMessage['headers'];
  /** Everything received so far, as text. */
  text(): string;
  /** Resolves with the first match of `pattern` in the received text. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Whether the server ended the stream (or it broke). */
  ended(): boolean;
  close(): void;
}

/** Opens a GET that answers a stream (SSE) and keeps reading it; raw node:http, no buffering. */
export function openStream(url: string, headers: Record<string, string>): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers }, (res) => {
      let received = '';
      let ended = false;
      const waiters = new Set<() => void>();
      res.on('close', () => (ended = true));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        received += chunk;
        for (const w of [...waiters]) w();
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        text: () => received,
        waitFor: (pattern, timeoutMs = 10_000) =>
          new Promise((done, fail) => {
            const timer = setTimeout(() => fail(new Error(`no ${pattern} in stream: ${received}`)), timeoutMs);
            const check = () => {
              const m = pattern.exec(received);
              if (!m) return;
              clearTimeout(timer);
              waiters.delete(check);
              done(m);
            };
            waiters.add(check);
            check();
          }),
        ended: () => ended,
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}
