/**
 * The most of a legacy HTTP+SSE upstream's answer to a POST that is read: its messages come
 * on the event stream, and the answer says only "Accepted", or why not (an error page, whose
 * start the error message quotes).
 */
export const MAX_POST_ANSWER_BYTES = 64 * 1024;

/**
 * A response body that ends after `limit` bytes, the rest of the source cancelled (which
 * ends its connection). The legacy HTTP+SSE transport is the SDK's, which reads each POST's
 * answer whole: one upstream answering with a body that never ended grew the daemon by about
 * 100 MB a second, until it would have run out of memory and taken every upstream with it.
 */
export function cutBody(body: ReadableStream<Uint8Array>, limit = MAX_POST_ANSWER_BYTES): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      const room = limit - seen;
      seen += value.length;
      if (value.length <= room) return controller.enqueue(value);
      if (room > 0) controller.enqueue(value.subarray(0, room));
      controller.close();
      await reader.cancel().catch(() => undefined);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** `fetch`, with every answer's body cut at `limit` bytes (cutBody). */
export async function fetchWithCutBodies(url: string | URL, init?: RequestInit, limit = MAX_POST_ANSWER_BYTES): Promise<Response> {
  const res = await fetch(url, init);
  // A null body (204, HEAD) has nothing to cut; a status a Response cannot be made with
  // (an opaque redirect's 0) is passed on as it is; so is an answer whose length is known
  // to be within the limit, the usual "Accepted": a message's POST costs no wrapper then.
  if (!res.body || res.status < 200 || res.status > 599) return res;
  const length = res.headers.get('content-length');
  if (length !== null && Number(length) <= limit) return res;
  return new Response(cutBody(res.body, limit), { status: res.status, statusText: res.statusText, headers: res.headers });
}
