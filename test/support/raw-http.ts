import { connect } from 'node:net';

export interface RawReply {
  status: number;
  /** The header block as sent, lines joined with CRLF. */
  head: string;
  body: string;
}

/**
 * A POST written byte by byte on a socket, for what no HTTP client sends: a header line
 * repeated (supertest's set() and fetch's Headers keep one value per name). The connection
 * is closed after the answer.
 */
export function postRaw(baseUrl: string, path: string, headerLines: readonly string[], body: unknown): Promise<RawReply> {
  const url = new URL(baseUrl);
  const payload = Buffer.from(JSON.stringify(body));
  const head = [
    `POST ${path} HTTP/1.1`,
    `Host: ${url.host}`,
    'Accept: application/json, text/event-stream',
    'Content-Type: application/json',
    `Content-Length: ${payload.length}`,
    'Connection: close',
    ...headerLines,
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), payload])));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const replyHead = split === -1 ? text : text.slice(0, split);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(replyHead)?.[1] ?? 0);
      resolve({ status, head: replyHead, body: split === -1 ? '' : text.slice(split + 4) });
    });
  });
}
