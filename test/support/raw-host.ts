import type { DaemonHandle } from './daemon.js';

type Message = Record<string, unknown> & { id?: string | number; method?: string };

/** One POST's answer, read as it comes (JSON, or SSE events of JSON-RPC messages). */
export interface PostReply {
  /** The HTTP status, once the answer's headers came (an SSE answer sends them with its first message). */
  status: Promise<number>;
  /** Every message received on it so far. */
  messages: Message[];
  /** Resolves once the answer has ended. */
  ended: Promise<void>;
}

/**
 * A Streamable HTTP host written against the wire, not the SDK: it initializes with
 * `capabilities`, sends notifications/initialized, and then only POSTs. It never opens the
 * GET stream (the spec makes it optional), which the SDK's client always does.
 */
export async function rawHost(daemon: DaemonHandle, capabilities: Record<string, unknown>, version = '2025-11-25') {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(daemon.mcpUrl, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities, clientInfo: { name: 'raw-host', version: '1' } } }),
  });
  const session = init.headers.get('mcp-session-id');
  await init.text();
  if (init.status !== 200 || !session) throw new Error(`initialize: ${init.status}`);
  Object.assign(headers, { 'mcp-session-id': session, 'mcp-protocol-version': version });
  const waiters = new Set<() => void>();

  /**
   * Sends one message (or a text as it is: JSON that JSON.stringify cannot write); what comes
   * back is read in the background, so several POSTs may be open at once.
   */
  const post = (message: Message | string): PostReply => {
    const body = typeof message === 'string' ? message : JSON.stringify(message);
    const response = fetch(daemon.mcpUrl, { method: 'POST', headers, body });
    const messages: Message[] = [];
    const got = (m: Message) => {
      messages.push(m);
      for (const w of [...waiters]) w();
    };
    const ended = (async () => {
      const res = await response;
      if (!res.body) return;
      if (!res.headers.get('content-type')?.includes('text/event-stream')) {
        const text = await res.text();
        if (text) got(JSON.parse(text) as Message);
        return;
      }
      const decoder = new TextDecoder();
      let buffered = '';
      for await (const chunk of res.body) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
          if (data) got(JSON.parse(data) as Message);
        }
      }
    })();
    return { status: response.then((r) => r.status), messages, ended };
  };

  /** Resolves with the first message on any of `replies` that `match` picks. */
  const waitFor = (replies: PostReply[], match: (m: Message) => boolean, timeoutMs = 10_000): Promise<Message> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = replies.flatMap((r) => r.messages).find(match);
        if (!found) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no such message within ${timeoutMs} ms; got ${JSON.stringify(replies.map((r) => r.messages))}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }).status;
  if (initialized !== 202) throw new Error(`notifications/initialized: ${initialized}`);
  const close = () => fetch(daemon.mcpUrl, { method: 'DELETE', headers }).then(() => undefined);
  return { post, waitFor, close };
}
