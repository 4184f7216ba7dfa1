import { invalidParams, isLogLevel } from '@switchboard/core';
import type { MethodHandler } from '../relay.types.js';
import { pushUpstreamLogLevel } from '../notification-fanout.js';

/**
 * logging/setLevel is per session: the session's threshold filters what it receives, and
 * the upstreams are asked for the most verbose level any session wants. The answer waits
 * for the upstreams, so that messages at the new level flow as soon as the host has it:
 * a call sent right after could otherwise reach an HTTP upstream before the level did.
 * A per-session connection serves one session: it is asked for that session's level.
 */
export const setLevel: MethodHandler = async ({ session, params }, services) => {
  if (!isLogLevel(params.level)) throw invalidParams("Invalid params: 'level' must be a logging level");
  session.logLevel = params.level;
  const principals = [...(services.principalConnections?.all() ?? [])].map((c) => c.connection);
  const mine = [...(services.sessionConnections?.all() ?? [])].filter((c) => c.owner === session.id).map((c) => c.connection);
  await Promise.all([
    ...[...services.registry.all(), ...principals].map((connection) => pushUpstreamLogLevel(connection, services.sessions)),
    ...mine.map((connection) => pushUpstreamLogLevel(connection, services.sessions, session.id)),
  ]);
  return {};
};
