import { silentLogger } from '@switchboard/observability';
import { describe, expect, it } from 'vitest';
import { limitSseEvents } from './sse-event-limit.js';

/** Everything the limited stream lets through, or the error it ends with. */
async function read(chunks: string[], limit: number): Promise<string> {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
  return new Response(limitSseEvents(body, silentLogger(), limit)).text();
}

describe('limitSseEvents', () => {
  it('passes events under the limit through unchanged, whatever the line ends and chunking', async () => {
    const text = 'event: message\ndata: 0123456789\n\nevent: message\r\ndata: 0123456789\r\n\r\ndata: abc\r\rdata: def\n\n';
    expect(await read([text.slice(0, 7), text.slice(7, 40), text.slice(40)], 30)).toBe(text);
  });

  it('fails the stream once one event grows past the limit, even without a blank line', async () => {
    await expect(read(['event: message\ndata: ', 'x'.repeat(100)], 50)).rejects.toThrow(/an SSE event over the limit of 50 characters/);
  });

  it('counts each event on its own: many events under the limit are fine', async () => {
    const event = `data: ${'y'.repeat(30)}\n\n`;
    expect(await read(Array.from({ length: 100 }, () => event), 40)).toBe(event.repeat(100));
  });
});
