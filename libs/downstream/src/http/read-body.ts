import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode } from '@switchboard/core';
import { parseBody } from '../message-intake.js';
import { replyError, replyJson } from './http-replies.js';

export class BodyTooLargeError extends Error {}

/** How long the rest of a refused oversized body may keep arriving after the 413. */
const DRAIN_AFTER_REFUSAL_MS = 2_000;

/** Reads the whole body as UTF-8, refusing more than `limit` bytes without buffering them. */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // The rest is read and dropped rather than the connection cut: a client still
        // sending would otherwise get a reset instead of the 413 (see readJsonPost).
        req.off('data', onData);
        chunks.length = 0;
        req.resume();
        reject(new BodyTooLargeError(`body larger than ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

/**
 * The POST body of either HTTP transport, decoded: 415 unless it is JSON, 413 past the
 * limit, 400 with -32700 when it does not parse. Undefined means the answer is already sent.
 */
export async function readJsonPost(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
): Promise<{ value: unknown } | undefined> {
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (mediaType !== 'application/json') {
    replyError(res, 415, ErrorCode.InvalidRequest, 'Unsupported Media Type: send application/json');
    return undefined;
  }
  let text: string;
  try {
    text = await readBody(req, limit);
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      replyError(res, 413, ErrorCode.InvalidRequest, `Request body too large (the limit is ${limit} bytes)`, null, { Connection: 'close' });
      // A client that keeps sending after its answer is cut off a little later.
      res.once('finish', () => setTimeout(() => req.destroy(), DRAIN_AFTER_REFUSAL_MS).unref());
    }
    return undefined;
  }
  const parsed = parseBody(text);
  if (!parsed.ok) {
    replyJson(res, 400, parsed.error);
    return undefined;
  }
  return { value: parsed.value };
}
