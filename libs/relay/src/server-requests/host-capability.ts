import { shapeServerRequest, Unanswerable } from '../revision/shape-server-request.js';
import type { DownstreamSession } from '../session.js';

type Item = Record<string, unknown>;

/** The elicitation mode a request asks for: `url`, or `form` (also when absent, as before 2025-11-25). */
export function elicitationMode(params: Item): 'form' | 'url' {
  return params.mode === 'url' ? 'url' : 'form';
}

/** Why a request's `mode` is none the spec defines (`form`, `url`, or absent for form); undefined when it is fine. */
export function elicitationModeProblem(params: Item): string | undefined {
  const mode = params.mode;
  return mode === undefined || mode === 'form' || mode === 'url' ? undefined : "mode must be 'form' or 'url' (or absent, for a form)";
}

/**
 * Whether a host can be asked this request: it declared what answering it needs, and its
 * protocol revision has the request as it is asked (revisionLacks).
 */
export function hostCanAnswer(session: DownstreamSession, method: string, params: Item): boolean {
  return hostDeclares(session, method, params) && revisionLacks(session, method, params) === undefined;
}

/**
 * What of this request the host's negotiated revision does not have and cannot be left out
 * (the method itself, url mode, tool use in sampling...); undefined when it can be asked. A
 * host that declares `elicitation` on 2025-03-26 still has no elicitation/create to answer.
 */
export function revisionLacks(session: DownstreamSession, method: string, params: Item): string | undefined {
  const shaped = shapeServerRequest(method, params, session.protocolVersion);
  return shaped instanceof Unanswerable ? shaped.lacking : undefined;
}

/**
 * Whether a host declared what answering this request needs. An `elicitation: {}` declared
 * before modes existed means form only; a url request never goes to a form-only host, nor a
 * form request to a url-only one.
 */
export function hostDeclares(session: DownstreamSession, method: string, params: Item): boolean {
  const caps = session.clientCapabilities;
  switch (method) {
    case 'sampling/createMessage':
      return isObject(caps.sampling);
    case 'roots/list':
      return isObject(caps.roots);
    case 'elicitation/create': {
      const elicitation = caps.elicitation;
      if (!isObject(elicitation)) return false;
      const modes = elicitation as Item;
      const declaresModes = 'form' in modes || 'url' in modes;
      return elicitationMode(params) === 'url' ? isObject(modes.url) : !declaresModes || isObject(modes.form);
    }
    default:
      return false;
  }
}

/** Tool use inside sampling (2025-11-25) needs the host's `sampling.tools`. */
export function hostSamplesWithTools(session: DownstreamSession): boolean {
  const sampling = session.clientCapabilities.sampling;
  return isObject(sampling) && isObject((sampling as Item).tools);
}

const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);
