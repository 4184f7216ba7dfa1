import type { DaemonHandle } from './daemon.js';
import { eventually } from './daemon.js';

export type InboxItemJson = Record<string, unknown> & { id: string; kind: string; server: string; principal: string | null };

/** The inbox as its page reads it: GET /admin/inbox/items (the loopback user is its admin). */
export async function inboxItems(daemon: DaemonHandle, headers: Record<string, string> = {}): Promise<InboxItemJson[]> {
  const res = await fetch(`${daemon.baseUrl}/admin/inbox/items`, { headers });
  if (res.status !== 200) throw new Error(`GET /admin/inbox/items: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { items: InboxItemJson[] }).items;
}

/** Waits for a pending item that `match` picks. */
export function pendingItem(daemon: DaemonHandle, match: (item: InboxItemJson) => boolean, headers: Record<string, string> = {}): Promise<InboxItemJson> {
  return eventually(async () => (await inboxItems(daemon, headers)).find(match), 15_000, 'a pending inbox item');
}

/** Answers an item as the page does; returns the HTTP status and body. */
export async function answerItem(
  daemon: DaemonHandle,
  id: string,
  answer: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const res = await fetch(`${daemon.baseUrl}/admin/inbox/items/${id}/answer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(answer),
  });
  return { status: res.status, body: await res.text() };
}
