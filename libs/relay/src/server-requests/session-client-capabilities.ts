import { shapeServerRequest, Unanswerable } from '../revision/shape-server-request.js';

type Item = Record<string, unknown>;

export interface SessionCapabilityOptions {
  /** The revision the host negotiated: what it declares counts only as far as that revision has it. */
  protocolVersion: string;
  /** The server's roots are pinned in the config: the gateway answers roots/list itself. */
  pinnedRoots: boolean;
  /**
   * Whether the gateway's web inbox takes elicitations (form and url) that the host
   * cannot. False until the inbox exists; the integrator wires it.
   */
  inboxEnabled?: () => boolean;
}

const isObject = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What a per-session upstream connection declares in initialize: sampling, elicitation and
 * roots only as far as the gateway can honour them for that session. Its host answers
 * sampling (with tool use only if it declared sampling.tools) and the elicitation modes it
 * declared (`elicitation: {}`, from before modes existed, means form), as far as its
 * revision has them (the relay asks it nothing else: hostCanAnswer); roots come from the
 * host, or from the config when pinned (listChanged: a reload may change them). Shared and
 * per-principal connections serve many hosts and declare everything the relay can carry.
 */
export function sessionClientCapabilities(host: Item, options: SessionCapabilityOptions): Item {
  const caps: Item = {};
  const has = (method: string, params: Item) => !(shapeServerRequest(method, params, options.protocolVersion) instanceof Unanswerable);
  if (isObject(host.sampling)) caps.sampling = isObject(host.sampling.tools) && has('sampling/createMessage', { tools: [] }) ? { tools: {} } : {};
  const revision = { elicitation: has('elicitation/create', {}), url: has('elicitation/create', { mode: 'url' }) };
  const elicitation = elicitationModes(host.elicitation, options.inboxEnabled?.() ?? false, revision);
  if (elicitation) caps.elicitation = elicitation;
  if (options.pinnedRoots) caps.roots = { listChanged: true };
  else if (isObject(host.roots)) caps.roots = { listChanged: host.roots.listChanged === true };
  return caps;
}

/** The modes the host declared and its revision has (`revision`: elicitation at all, url mode). */
function elicitationModes(declared: unknown, inbox: boolean, revision: { elicitation: boolean; url: boolean }): Item | undefined {
  // The inbox takes either mode from a human on the web page, whatever the host can do.
  if (inbox) return { form: {}, url: {} };
  if (!revision.elicitation || !isObject(declared)) return undefined;
  const hasModes = 'form' in declared || 'url' in declared;
  const modes: Item = {};
  if (!hasModes || isObject(declared.form)) modes.form = {};
  if (isObject(declared.url) && revision.url) modes.url = {};
  return Object.keys(modes).length > 0 ? modes : undefined;
}
