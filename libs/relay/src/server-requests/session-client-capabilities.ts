type Item = Record<string, unknown>;

export interface SessionCapabilityOptions {
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
 * declared (`elicitation: {}`, from before modes existed, means form); roots come from the
 * host, or from the config when pinned (listChanged: a reload may change them). Shared and
 * per-principal connections serve many hosts and declare everything the relay can carry.
 */
export function sessionClientCapabilities(host: Item, options: SessionCapabilityOptions): Item {
  const caps: Item = {};
  if (isObject(host.sampling)) caps.sampling = isObject(host.sampling.tools) ? { tools: {} } : {};
  const elicitation = elicitationModes(host.elicitation, options.inboxEnabled?.() ?? false);
  if (elicitation) caps.elicitation = elicitation;
  if (options.pinnedRoots) caps.roots = { listChanged: true };
  else if (isObject(host.roots)) caps.roots = { listChanged: host.roots.listChanged === true };
  return caps;
}

function elicitationModes(declared: unknown, inbox: boolean): Item | undefined {
  // The inbox takes either mode from a human on the web page, whatever the host can do.
  if (inbox) return { form: {}, url: {} };
  if (!isObject(declared)) return undefined;
  const hasModes = 'form' in declared || 'url' in declared;
  const modes: Item = {};
  if (!hasModes || isObject(declared.form)) modes.form = {};
  if (isObject(declared.url)) modes.url = {};
  return Object.keys(modes).length > 0 ? modes : undefined;
}
