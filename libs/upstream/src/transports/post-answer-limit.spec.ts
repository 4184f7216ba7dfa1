import { describe, expect, it } from 'vitest';
import { cutBody, fetchWithCutBodies } from './post-answer-limit.js';

describe('cutBody', () => {
  it('passes a body within the limit through whole', async () => {
    const body = new Response('Accepted').body!;
    expect(await new Response(cutBody(body, 100)).text()).toBe('Accepted');
  });

  it('ends an endless body after the limit and cancels its source', async () => {
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(new TextEncoder().encode('z'.repeat(1000))),
      cancel: () => void (cancelled = true),
    });
    const text = await new Response(cutBody(endless, 2500)).text();
    expect(text).toBe('z'.repeat(2500));
    expect(cancelled).toBe(true);
  });
});

describe('fetchWithCutBodies', () => {
  it('passes an answer of a known length within the limit on as it is, and cuts one of no stated length', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      if (req.url === '/short') return void res.writeHead(202, { 'content-length': '8' }).end('Accepted');
      res.writeHead(200);
      res.end('y'.repeat(5000));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const short = await fetchWithCutBodies(`${base}/short`, { method: 'POST' }, 100);
      expect(await short.text()).toBe('Accepted');
      const long = await fetchWithCutBodies(`${base}/long`, { method: 'POST' }, 100);
      expect(long.status).toBe(200);
      expect(await long.text()).toBe('y'.repeat(100));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
