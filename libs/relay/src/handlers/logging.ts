import { invalidParams, isLogLevel } from '@switchboard/core';
import type { MethodHandler } from '../relay.types.js';
import { upstreamLogLevel } from '../notification-fanout.js';

/**
 * logging/setLevel is per session: the session's threshold filters what it receives, and
 * the upstreams are asked for the most verbose level any session wants.
 */
export const setLevel: MethodHandler = async ({ session, params }, services) => {
  if (!isLogLevel(params.level)) throw invalidParams("Invalid params: 'level' must be a logging level");
  session.logLevel = params.level;
  const level = upstreamLogLevel(services.sessions);
  if (level) {
    for (const connection of services.registry.all()) {
      if (!connection.isAvailable || !connection.capabilities.logging) continue;
      void connection.request('logging/setLevel', { level }).catch(() => undefined);
    }
  }
  return {};
};
