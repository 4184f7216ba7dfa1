import { describe, expect, it } from 'vitest';
import { cutBody } from './post-answer-limit.js';

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
