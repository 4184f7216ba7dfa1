import type { ServerResponse } from 'node:http';
import { mayAnswer, type Inbox, type InboxViewer } from '@switchboard/inbox';

export const HEARTBEAT_MS = 15_000;

export interface EventStreamOptions {
  inbox: Inbox;
  viewer: InboxViewer;
  /** Whether the viewer came with a cookie session (the page then offers to sign out). */
  session: boolean;
  /** Asked at every heartbeat: is the stream's credential still good, for the same viewer? False ends the stream. */
  stillAdmitted: () => Promise<boolean>;
  heartbeatMs?: number;
}

/**
 * GET /admin/inbox/events: Server-Sent Events. First `snapshot` (what the viewer may see now,
 * and the server's clock, so the page's countdowns do not depend on the browser's), then
 * `added` and `removed` as the inbox changes, each filtered to the viewer exactly as
 * /admin/inbox/items is. A comment every 15 s keeps proxies from closing an idle stream and
 * rechecks the credential: a revoked key ends the stream within one heartbeat, and the page's
 * reconnect then meets the 401. The inbox listener is removed when the stream closes.
 */
export function streamInboxEvents(res: ServerResponse, options: EventStreamOptions): void {
  const { inbox, viewer } = options;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Accel-Buffering': 'no',
  });
  const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.write('retry: 3000\n\n');
  send('snapshot', { items: inbox.visibleTo(viewer), now: Date.now(), viewer, session: options.session });

  const stop = inbox.onChange((event) => {
    if (event.type === 'added') {
      if (mayAnswer(viewer, event.item)) send('added', { item: event.item, now: Date.now() });
    } else if (mayAnswer(viewer, event)) {
      send('removed', { id: event.id, outcome: event.outcome });
    }
  });
  const heartbeat = setInterval(() => {
    res.write(': heartbeat\n\n');
    options.stillAdmitted().then(
      (ok) => ok || end(),
      () => end(),
    );
  }, options.heartbeatMs ?? HEARTBEAT_MS);
  heartbeat.unref();
  const cleanup = () => {
    stop();
    clearInterval(heartbeat);
  };
  const end = () => {
    cleanup();
    res.end();
  };
  res.once('close', cleanup);
}
