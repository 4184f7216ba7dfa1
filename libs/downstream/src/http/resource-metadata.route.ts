import type { IncomingMessage, ServerResponse } from 'node:http';
import { authorizationServersOf, protectedResourceMetadata } from '@switchboard/auth';
import { ErrorCode } from '@switchboard/core';
import type { DownstreamDeps } from '../downstream.types.js';
import { answerPreflight, applyCors } from './cors.js';
import { replyError, replyJson } from './http-replies.js';
import { admitted } from './request-guard.js';

/**
 * `GET /.well-known/oauth-protected-resource` (RFC 9728): public, so that a client turned
 * away with 401 can learn where to get a token. Host/Origin are still checked, like every
 * endpoint of this listener.
 */
export function serveResourceMetadata(req: IncomingMessage, res: ServerResponse, deps: Pick<DownstreamDeps, 'config' | 'onRefused'>): void {
  if (!admitted(req, res, deps.config(), deps.onRefused)) return;
  applyCors(req, res);
  if (req.method === 'OPTIONS') return answerPreflight(res, 'GET');
  if (req.method !== 'GET') return replyError(res, 405, ErrorCode.InvalidRequest, 'Method not allowed', null, { Allow: 'GET' });
  replyJson(res, 200, protectedResourceMetadata(req, authorizationServersOf(deps.config().auth)), { 'Cache-Control': 'max-age=300' });
}
