import { isResponseTo } from './jsonrpc.js';

/**
 * The data of each event in an SSE body, in order: `data:` lines of one event joined
 * with "\n", events separated by a blank line. Events without data (comments, the
 * priming event some servers send for resumability) are skipped. A last event that is
 * not followed by a blank line is still returned: the body is complete once the
 * response ended, and a lenient reader finds the response either way.
 */
export function sseDataOf(body: string): string[] {
  const events: string[] = [];
  let data: string[] = [];
  const flush = () => {
    if (data.length > 0) {
      const joined = data.join('\n');
      if (joined !== '') events.push(joined);
    }
    data = [];
  };
  for (const line of body.split(/\r\n|\r|\n/)) {
    if (line === '') {
      flush();
      continue;
    }
    if (line.startsWith(':')) continue; // comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== 'data') continue; // event, id, retry: irrelevant here
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    data.push(value);
  }
  flush();
  return events;
}

/**
 * The JSON-RPC response to request id in an HTTP response body, which may be
 * application/json (one message or a batch) or text/event-stream (notifications may
 * precede the response). undefined when it is not there or does not parse.
 */
export function findResponse(contentType: string | undefined, body: string, id: number): unknown {
  const candidates: unknown[] = [];
  if (contentType?.startsWith('text/event-stream')) {
    for (const data of sseDataOf(body)) {
      const parsed = tryParse(data);
      if (Array.isArray(parsed)) candidates.push(...(parsed as unknown[]));
      else candidates.push(parsed);
    }
  } else {
    const parsed = tryParse(body);
    if (Array.isArray(parsed)) candidates.push(...(parsed as unknown[]));
    else candidates.push(parsed);
  }
  return candidates.find((message) => isResponseTo(message, id));
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
