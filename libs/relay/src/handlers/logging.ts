import { invalidParams, isLogLevel, type LogLevel } from '@switchboard/core';
import type { MethodHandler, RelayServices } from '../relay.types.js';
import { DEFAULT_SESSION_LOG_LEVEL, pushUpstreamLogLevel, upstreamLogLevel } from '../notification-fanout.js';
import type { SessionDirectory } from '../session.js';

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
  const mine = [...(services.sessionConnections?.all() ?? [])].filter((c) => c.owner === session.id).map((c) => c.connection);
  await Promise.all([
    pushSharedLogLevel(services, false),
    ...mine.map((connection) => pushUpstreamLogLevel(connection, services.sessions, session.id)),
  ]);
  return {};
};

/** Per directory of sessions: the level the shared upstreams were last asked for. */
const lastAsked = new WeakMap<SessionDirectory, LogLevel>();

/**
 * Asks the shared and per-principal upstreams for the level the sessions want now. Called
 * on logging/setLevel, and with `onlyIfChanged` when a session joins (initialize) or
 * leaves: a new session wants the default (info) and must not be silenced by a quieter
 * one that came before, and a debug session that leaves must not keep everyone's
 * upstreams at debug. Once a level was asked, a change back to nobody asking sends the
 * default, since the upstream's own default is no longer in force.
 */
export async function pushSharedLogLevel(services: RelayServices, onlyIfChanged: boolean): Promise<void> {
  const { sessions } = services;
  const previous = lastAsked.get(sessions);
  const wanted = upstreamLogLevel(sessions) ?? (previous !== undefined ? DEFAULT_SESSION_LOG_LEVEL : undefined);
  if (wanted === undefined || (onlyIfChanged && wanted === previous)) return;
  lastAsked.set(sessions, wanted);
  const principals = [...(services.principalConnections?.all() ?? [])].map((c) => c.connection);
  await Promise.all(
    [...services.registry.all(), ...principals].map((connection) =>
      pushUpstreamLogLevel(connection, sessions, undefined, DEFAULT_SESSION_LOG_LEVEL),
    ),
  );
}
