import type { IncomingMessage } from 'node:http';

export type JsonBody = { ok: true; value: unknown } | { ok: false; status: 400 | 413 | 415; message: string };

/**
 * Reads a request's JSON body (the daemon runs Nest without a body parser). The content type
 * must say JSON: a page on another site can make a browser post a form (urlencoded, multipart
 * or text/plain) without asking, but not `application/json`, which needs a CORS preflight
 * this daemon never grants. Together with the Host/Origin check and the SameSite=Strict
 * cookie, that is what keeps another site from answering questions in a signed-in browser.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes = 256 * 1024): Promise<JsonBody> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    req.resume();
    return { ok: false, status: 415, message: 'the body must be JSON (Content-Type: application/json)' };
  }
  const text = await readText(req, maxBytes);
  if (text === undefined) return { ok: false, status: 413, message: `the body exceeds ${maxBytes} bytes` };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, status: 400, message: 'the body is not valid JSON' };
  }
}

/** The body as text, or undefined past `maxBytes` (the rest is drained, not kept, so the answer can still be sent). */
function readText(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.once('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}
