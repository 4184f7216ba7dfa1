import { bareEntry, type AuditEntry } from '@switchboard/audit';
import {
  ErrorCode,
  MAX_JSON_DEPTH,
  McpError,
  anyCancelled,
  callerName,
  methodNotFound,
  nestsDeeperThan,
  newTraceId,
  parseCallerName,
  relatedTaskIdOf,
  withRelatedTask,
  withoutRelatedTask,
  type PeerRequestOptions,
} from '@switchboard/core';
import type { ServerRequest, UpstreamConnection } from '@switchboard/upstream';
import type { Item, RelayServices } from '../relay.types.js';
import type { DownstreamSession, Principal } from '../session.js';
import type { Inbox } from '@switchboard/inbox';
import type { PolicyPrincipal } from '@switchboard/policy';
import { elicitThroughInbox } from './inbox-elicitation.js';
import { elicitationMode, elicitationModeProblem, hostCanAnswer, hostDeclares, hostSamplesWithTools, revisionLacks } from './host-capability.js';
import { shapeServerRequest } from '../revision/shape-server-request.js';
import { ownerFields, sessionFields } from '../audit/session-fields.js';
import { isRelayOrigin, sharedOrigin, type RelayOrigin } from './relay-origin.js';
import { samplingParamsProblems } from './sampling-params.js';
import { checkHostAnswer } from './host-answer.js';
import { shapeHostAnswer } from '../revision/shape-host-answer.js';
import { Unanswerable } from '../revision/shape-server-request.js';
import { progressRate } from '../forwarder.js';
import { elicitationParamsProblem } from './elicitation-params.js';
import { invalidAnswer } from './invalid-answer.js';

export interface RelayLimits {
  /** How long a host (its user) has to answer. */
  timeoutMs: number;
  /** A sampling request's maxTokens is capped to this. */
  maxSamplingTokens: number;
  /** Whether an elicitation no host can take waits in the web inbox (else the upstream gets -32602). */
  inbox: boolean;
}

/** The server-to-client requests the gateway relays; anything else is -32601. */
const RELAYED = new Set(['sampling/createMessage', 'elicitation/create', 'roots/list']);

/** What the gateway tells an upstream when no host can answer and the inbox cannot either. */
const refused = (message: string) => new McpError(ErrorCode.InvalidParams, message);

interface Route {
  session?: DownstreamSession;
  origin?: RelayOrigin;
  /** Why there is no session. */
  reason?: string;
  /**
   * Without a session: the principal every candidate session belongs to, when they all
   * belong to one (several of one user's hosts in flight). The question is theirs then:
   * they may answer it in the inbox, and it counts against their share there.
   */
  principal?: Principal;
  /**
   * The host requests in flight it is about, whose idle timeouts wait while it is
   * unanswered: those of its session, or of its principal when it has no session.
   */
  about: RelayOrigin[];
}

/**
 * Relays an upstream's sampling, elicitation and roots requests to the host whose request
 * caused them (docs/relay.md): the request whose response stream carried
 * it, else the one host with requests in flight on that connection, else the session that
 * owns a per-session connection, else the one session of the principal who owns a
 * per-principal connection. Never to a host that did not declare
 * the capability (or the elicitation mode), nor to one whose negotiated revision lacks the
 * request as asked: an elicitation no host can take waits in the web inbox instead, when it
 * is on. A host gets the request in the shape of its revision. Sampling needs a policy rule
 * that allows it.
 * Every relay is an audit row holding the request and the answer, redacted.
 */
export class ServerRequestRelay {
  constructor(
    private readonly services: RelayServices,
    private readonly limits: () => RelayLimits,
  ) {}

  readonly handle = async (req: ServerRequest): Promise<Item> => {
    const { request, connection } = req;
    const started = performance.now();
    const params = (request.params ?? {}) as Item;
    const route = this.route(req, params);
    req.attribute(route.about);
    const entry = this.draft(req, route);
    let result: Item | undefined;
    let errorText: string | null = null;
    let forwarded = false;
    let answeredBy: string | undefined;
    /** The request as the gateway let it on (admit): what a host or the inbox was asked. */
    let admitted: Item | undefined;
    try {
      if (!RELAYED.has(request.method)) throw methodNotFound(request.method);
      const modeProblem = request.method === 'elicitation/create' ? elicitationModeProblem(params) : undefined;
      if (modeProblem) {
        // Checked before routing: an unknown mode is not a form, whatever a host would make of it.
        entry.rule = 'relay:invalid-request';
        throw new McpError(ErrorCode.InvalidParams, `Invalid elicitation request: ${modeProblem}`);
      }
      const session = route.session;
      const unanswerable = this.unanswerable(req, route, params);
      if (unanswerable) {
        const inbox = this.inboxFor(request.method);
        if (!inbox) {
          entry.rule = unanswerable.rule;
          throw refused(unanswerable.why);
        }
        // Nobody's host can take it: a human answers on the inbox page instead. The row says
        // relay:inbox; the log says why the host was not asked, for whoever wonders why its call waits.
        this.services.logger?.info({ upstream: connection.name, method: request.method, session: session?.id, why: unanswerable.rule }, `a relayed request waits in the inbox: ${unanswerable.why}`);
        // The caller's name (key or token, not just the name: callerName), as the inbox shows and matches it.
        const asker = session?.principal ?? route.principal;
        const principal = (asker && callerName(asker)) ?? this.services.principalConnections?.ownerOf(connection) ?? null;
        const outgoing = this.admit(asker ?? parseCallerName(principal ?? '') ?? { id: '', authMethod: 'none' }, session, connection.name, request.method, params, entry);
        admitted = outgoing;
        forwarded = true;
        entry.rule = 'relay:inbox';
        const limits = this.limits();
        // Withdrawn when the upstream stops waiting, or the host request that caused it ends.
        const signal = anyCancelled(req.signal, route.origin?.signal);
        const answer = await elicitThroughInbox(outgoing, { inbox, server: connection.name, principal, timeoutMs: limits.timeoutMs, signal });
        answeredBy = answer.answeredBy;
        result = answer.result;
      } else {
        const asked = this.admit(session!.principal, session!, connection.name, request.method, params, entry);
        admitted = asked;
        forwarded = true;
        // In the shape of the host's revision; unanswerable() ruled out what it cannot carry.
        // Never with the upstream's task id: with the gateway's, for a task relayed to this
        // host's principal; else with none (the gateway ran that task for a host that never saw it).
        const related = this.services.tasks?.relatedFor(session!, connection, asked) ?? withoutRelatedTask(asked);
        const outgoing = shapeServerRequest(request.method, related, session!.protocolVersion) as Item;
        const answer = await session!.request(request.method, outgoing, {
          timeoutMs: this.limits().timeoutMs,
          signal: anyCancelled(req.signal, route.origin?.signal),
          ...(route.origin && { relatedRequestId: route.origin.requestId }),
          ...progressRelayedTo(connection, outgoing),
        });
        // Thousands of levels overflow the stack of every recursive walk after this one (the
        // checks, redaction, the row's JSON, the encoder towards the upstream), and the
        // upstream got a bare "Internal error" with no row. Hosts' requests have the same bound.
        if (nestsDeeperThan(answer, MAX_JSON_DEPTH)) throw invalidAnswer(this.services.logger, req, entry, [`it nests deeper than ${MAX_JSON_DEPTH} levels`]);
        // The row holds what the host sent, even when the upstream does not get it.
        result = answer;
        // Checked against what the upstream asked: the answer is the upstream's.
        result = this.checked(req, asked, result, entry);
        if (elicitationMode(asked) === 'url' && result.action === 'accept') {
          // Its completion notice, when the upstream sends one, goes to the same host.
          this.services.urlElicitations?.given(session!, connection, String(asked.elicitationId));
        }
      }
      // Related to the upstream's task its request named, whatever task id the host's answer gave.
      result = relatedAsAsked(params, result);
      entry.decision = 'allowed';
      entry.rule ??= 'relay:host';
      entry.outcome = 'ok';
      return result;
    } catch (err) {
      let error = err instanceof McpError ? err : new McpError(ErrorCode.InternalError, 'Internal error');
      // A host's error answer goes to the upstream as it came, but not with data too deep to
      // encode: JSON.stringify threw on its way to the upstream, outside any handler, and the
      // daemon exited. Only a host's answer can carry such data (the gateway's errors do not).
      if (nestsDeeperThan(error.data, MAX_JSON_DEPTH)) error = invalidAnswer(this.services.logger, req, entry, [`its error's data nests deeper than ${MAX_JSON_DEPTH} levels`]);
      // Past the gates, a failure is the host's answer (declined by its user, timed out, gone).
      if (forwarded) {
        entry.decision = 'allowed';
        entry.rule ??= 'relay:host';
        entry.outcome = 'error';
      }
      entry.errorCode = error.code;
      errorText = error.message;
      throw error;
    } finally {
      entry.latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
      await this.record(entry, params, result, errorText, answeredBy, admitted);
    }
  };

  private route(req: ServerRequest, params: Item): Route {
    const origins = req.candidates.filter(isRelayOrigin).filter((o) => this.services.sessions.get(o.session.id) === o.session);
    const sessions = [...new Set(origins.map((o) => o.session))];
    if (sessions.length === 1) {
      const session = sessions[0];
      const mine = origins.filter((o) => o.session === session);
      // On the stream of the causing request when it is known; else on one of the requests
      // that may have caused it (a host need not open a stream of its own).
      if (req.related || mine.length === 1) return { session, origin: mine[0], about: mine };
      return { session, origin: sharedOrigin(mine, (id) => session.canReach?.(id) ?? true), about: mine };
    }
    if (sessions.length > 1) {
      // By caller name: a key and a token with the same name are two callers.
      const principals = new Set(sessions.map((s) => callerName(s.principal)));
      return {
        reason: 'several hosts have requests in flight on that connection, and it did not say which one this is for',
        // One principal's: put to them, so about their calls. Several principals': about
        // nobody's, or one user's question would hold another's calls open.
        ...(principals.size === 1 ? { principal: sessions[0].principal, about: origins } : { about: [] }),
      };
    }
    // A per-session connection has exactly one host: its session (whether it can answer is
    // checked by the caller, as for any route).
    const sessionId = this.services.sessionConnections?.ownerOf(req.connection);
    if (sessionId !== undefined) {
      const session = this.services.sessions.get(sessionId);
      return session?.initialized ? { session, about: [] } : { reason: 'the session that owns the connection has ended', about: [] };
    }
    const owner = this.services.principalConnections?.ownerOf(req.connection);
    if (owner !== undefined) {
      const theirs = [...this.services.sessions.initialized()].filter(
        (s) => callerName(s.principal) === owner && hostCanAnswer(s, req.request.method, params),
      );
      if (theirs.length === 1) return { session: theirs[0], about: [] };
    }
    return { reason: 'no host request is in flight on that connection', about: [] };
  }

  /** Why the routed host cannot take this request (the rule and the words for the upstream); undefined when it can. */
  private unanswerable(req: ServerRequest, route: Route, params: Item): { rule: string; why: string } | undefined {
    const { session } = route;
    const { method } = req.request;
    if (!session) return { rule: 'relay:no-host', why: `No host can answer ${method} from '${req.connection.name}': ${route.reason}` };
    if (!hostDeclares(session, method, params)) {
      return { rule: 'relay:host-lacks-capability', why: `The host that caused this request did not declare support for ${this.what(method, params)}` };
    }
    const lacking = revisionLacks(session, method, params);
    if (lacking) {
      // Declared or not, its revision has no such request: sent anyway, it would fail or be misread.
      return { rule: 'relay:host-revision', why: `The host that caused this request speaks MCP ${session.protocolVersion}, which has no ${lacking}` };
    }
    if (session.canReach?.(route.origin?.requestId) === false) {
      // Not silently: a question sent now would be lost, and the upstream would wait out relay.timeoutMs.
      this.services.logger?.warn({ upstream: req.connection.name, method, session: session.id }, 'a relayed request has no open stream to its host');
      const why = `The host has no open stream to receive ${method} (it opened no GET stream, and no request of its that this is about is open)`;
      return { rule: 'relay:host-unreachable', why };
    }
    return undefined;
  }

  /**
   * The host's answer as the upstream may get it; an answer its request ruled out is a
   * failure of the gateway's side (-32603: the upstream asked nothing wrong), with the
   * problems, and a log line.
   */
  private checked(req: ServerRequest, outgoing: Item, answer: Item, entry: AuditEntry): Item {
    const checked = checkHostAnswer(req.request.method, outgoing, answer);
    if ('result' in checked) return this.shapedForUpstream(req, checked.result, entry);
    throw invalidAnswer(this.services.logger, req, entry, checked.problems);
  }

  /**
   * A valid answer in the shape of the upstream's revision; one that revision cannot carry
   * whole is an error (-32603, as an invalid answer is) rather than part of the answer.
   */
  private shapedForUpstream(req: ServerRequest, answer: Item, entry: AuditEntry): Item {
    const version = req.connection.protocolVersion;
    const shaped = shapeHostAnswer(req.request.method, answer, version);
    if (!(shaped instanceof Unanswerable)) return shaped;
    entry.rule = 'relay:upstream-revision';
    this.services.logger?.warn(
      { upstream: req.connection.name, method: req.request.method, session: entry.sessionId, version, lacking: shaped.lacking },
      "a host's answer to a relayed request cannot be expressed in the upstream's protocol revision; the upstream gets an error",
    );
    throw new McpError(ErrorCode.InternalError, `The host's answer to ${req.request.method} cannot be given in MCP ${version}, which has no ${shaped.lacking}`);
  }

  /** The inbox, when it is on and can take this request: only elicitations (a human is not a model, nor has roots). */
  private inboxFor(method: string): Inbox | undefined {
    return method === 'elicitation/create' && this.limits().inbox ? this.services.inbox : undefined;
  }

  private what(method: string, params: Item): string {
    return method === 'elicitation/create' ? `${elicitationMode(params)}-mode elicitation` : method;
  }

  /**
   * Policy and limits on what reaches the human, for the principal it is asked on behalf of;
   * returns the params to send. Throws a refusal. `session` is the host that will answer
   * (undefined when the inbox does).
   */
  private admit(principal: PolicyPrincipal, session: DownstreamSession | undefined, server: string, method: string, params: Item, entry: AuditEntry): Item {
    const policy = this.services.policy;
    if (method === 'sampling/createMessage') {
      // Off unless a rule allows it: a default of allow is not consent to spend a user's model.
      const decision = policy?.decide(principal, 'sample', 'Server', { server });
      if (!decision?.allowed || decision.rule === 'policy:default-allow') {
        entry.decision = 'denied';
        entry.rule = decision && !decision.allowed ? decision.rule : 'relay:sampling-not-allowed';
        throw refused(`Sampling is not allowed for '${server}' (the gateway's policy has no rule allowing it)`);
      }
      entry.rule = decision.rule;
      const problems = samplingParamsProblems(params);
      if (problems.length > 0) {
        entry.rule = 'relay:invalid-request';
        throw new McpError(ErrorCode.InvalidParams, `Invalid sampling request: ${problems.join('; ')}`);
      }
      if ((params.tools !== undefined || params.toolChoice !== undefined) && !(session && hostSamplesWithTools(session))) {
        entry.rule = 'relay:host-lacks-capability';
        throw refused('The host does not support tool use in sampling (sampling.tools)');
      }
      const max = this.limits().maxSamplingTokens;
      const capped = (params.maxTokens as number) > max ? { ...params, maxTokens: max } : params;
      // To the host, "this server" is the gateway: every upstream's context, not the asker's
      // own; and "all servers" would show the asker every other upstream's. Servers must not
      // see into one another, so neither reaches the host.
      return capped.includeContext === 'thisServer' || capped.includeContext === 'allServers' ? { ...capped, includeContext: 'none' } : capped;
    }
    if (method === 'elicitation/create') {
      const decision = policy?.decide(principal, 'elicit', 'Server', { server });
      if (decision && !decision.allowed) {
        entry.decision = 'denied';
        entry.rule = decision.rule;
        throw refused(`Elicitation is not allowed for '${server}'`);
      }
      if (decision) entry.rule = decision.rule;
      const problem = elicitationParamsProblem(params);
      if (problem) {
        entry.rule = problem.rule;
        throw new McpError(ErrorCode.InvalidParams, problem.message);
      }
    }
    return params;
  }

  private draft(req: ServerRequest, route: Route): AuditEntry {
    const owner = this.services.principalConnections?.ownerOf(req.connection);
    const nobody = route.principal
      ? { principal: route.principal.id, authMethod: route.principal.authMethod }
      : owner !== undefined
        ? ownerFields(owner)
        : { principal: 'unknown', authMethod: 'none' };
    return bareEntry({
      ...sessionFields(route.session, nobody),
      upstream: req.connection.name,
      method: req.request.method,
      name: req.request.method === 'elicitation/create' ? elicitationMode((req.request.params ?? {}) as Item) : null,
      decision: 'refused',
      rule: null,
      outcome: null,
      errorMessage: null,
      requestId: String(req.request.id),
      // The trace of the host's request that caused it; one asked on the upstream's own starts one.
      traceId: route.origin?.traceId ?? newTraceId(),
    });
  }

  /**
   * The row holds the request and the answer (redacted by the audit log's rules), and what
   * the gateway changed in the request before anyone saw it (sentToHost: a capped maxTokens,
   * includeContext as none), so that the row says what the host was actually asked.
   */
  private async record(entry: AuditEntry, params: Item, result: Item | undefined, error: string | null, answeredBy?: string, admitted?: Item): Promise<void> {
    const audit = this.services.audit;
    if (!audit) return;
    if (result) entry.responseBytes = Buffer.byteLength(JSON.stringify(result));
    const changed = admitted && changedForHost(params, admitted);
    const answer = { request: params, ...(changed && { sentToHost: changed }), answer: result ?? null, ...(answeredBy !== undefined && { answeredBy }) };
    // Turned down before anyone saw it: bounded per upstream, which can ask in a loop.
    const written = entry.decision === 'allowed' ? audit.record(entry, answer, error) : audit.recordUnrelayed(entry, answer, error);
    await written.catch(() => undefined);
  }
}

/** The fields admit() changed (sampling's maxTokens and includeContext), as sent; undefined when none. */
function changedForHost(asked: Item, admitted: Item): Item | undefined {
  if (admitted === asked) return undefined;
  let changed: Item | undefined;
  for (const field of ['maxTokens', 'includeContext']) {
    if (admitted[field] !== asked[field]) (changed ??= {})[field] = admitted[field];
  }
  return changed;
}

/**
 * An answer as the upstream gets it: related to the upstream's task its request named (the
 * spec has a response about a task carry the task's id too), in place of the gateway's id the
 * host saw and may have echoed; without any when the request named none, so nothing a host
 * puts there relates the answer to a task of the upstream's it did not ask about.
 */
function relatedAsAsked(params: Item, answer: Item): Item {
  const taskId = relatedTaskIdOf(params);
  return taskId === undefined ? withoutRelatedTask(answer) : withRelatedTask(answer, taskId);
}

/**
 * A progress token is its sender's own, unique among the sender's open requests; towards the
 * host the sender is the gateway, and two upstreams (whose SDKs both number from 0) may ask
 * one host at once with the same token. An upstream's token is replaced by one the host's
 * session owns (the peer's, with onProgress), and the host's progress goes back to the
 * upstream under the token it gave.
 */
function progressRelayedTo(connection: UpstreamConnection, params: Item): Pick<PeerRequestOptions, 'onProgress'> {
  const token = (params._meta as Item | undefined)?.progressToken;
  if (typeof token !== 'string' && typeof token !== 'number') return {};
  // A host's flood would reach an upstream other hosts share: bounded as the other way is.
  const withinRate = progressRate();
  return {
    onProgress: (progress) => {
      if (withinRate()) void connection.notify('notifications/progress', { ...progress, progressToken: token });
    },
  };
}
