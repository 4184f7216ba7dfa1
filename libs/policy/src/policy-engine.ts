import { createHash } from 'node:crypto';
import { CompiledPolicy, type PolicyDecision, type PolicyPrincipal, type SubjectFields, type SubjectType } from './compiled-policy.js';
import type { PolicyDocument } from './policy-document.js';
import { uriAsServersRead } from './uri-reading.js';

export type ListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** An item of a merged list and where it came from, as the catalog's list filter sees them. */
/** `origin.original`: the upstream's own name, URI or URI template (the catalog's ListEntryOrigin). */
export type ListItemFilter = (item: Record<string, unknown>, origin: { server: string; original?: string }) => boolean;

/** Requests an upstream answers by the URI as it reads it (uri-reading.ts), not as written. */
const URI_LOOKUPS = new Set(['read', 'subscribe']);

const SUBJECT_OF: Record<ListKind, SubjectType> = { tools: 'Tool', prompts: 'Prompt', resources: 'Resource', resourceTemplates: 'Resource' };

/**
 * The policy in force. Replaced whole on a reload, so a request sees one version from start
 * to end; `version` tells caches apart.
 */
export class PolicyEngine {
  private compiled: CompiledPolicy;
  private generation = 1;
  /** No rule and a default of allow: lists need no filter at all. */
  private permitsAll: boolean;

  private contentDigest?: string;

  constructor(
    private doc: PolicyDocument,
    private readonly fallbackEffect: 'allow' | 'deny',
    /** Where the document came from, for logs and `policy check`; undefined without a file. */
    readonly source?: string,
  ) {
    this.compiled = new CompiledPolicy(doc, doc.defaultEffect ?? fallbackEffect);
    this.permitsAll = permitsAll(doc, this.compiled.defaultEffect);
  }

  /** A policy without a file: only the default effect. */
  static defaultOnly(effect: 'allow' | 'deny'): PolicyEngine {
    return new PolicyEngine({ roles: {}, users: {}, groups: {}, everyone: [] }, effect);
  }

  get defaultEffect(): 'allow' | 'deny' {
    return this.compiled.defaultEffect;
  }

  get version(): number {
    return this.generation;
  }

  /**
   * Names the policy's content (document and default effect). An approval is bound to it:
   * a changed policy voids approvals given under the old one, while a reload of the same
   * file does not.
   */
  get digest(): string {
    return (this.contentDigest ??= policyDigest(this.doc, this.compiled.defaultEffect));
  }

  replace(doc: PolicyDocument): void {
    this.doc = doc;
    this.contentDigest = undefined;
    this.compiled = new CompiledPolicy(doc, doc.defaultEffect ?? this.fallbackEffect);
    this.permitsAll = permitsAll(doc, this.compiled.defaultEffect);
    this.generation += 1;
  }

  /**
   * A `read` or `subscribe` is judged by the URI as written and, when an SDK server reads it
   * as another one (`DEMO://x/secret`, `demo://x/a/.<TAB>./secret`), by that one too: rules
   * match text, and both must allow it. So the daemon and `policy check` decide alike.
   */
  decide(principal: PolicyPrincipal, action: string, type: SubjectType, fields: SubjectFields): PolicyDecision {
    const decision = this.compiled.decide(principal, action, type, fields);
    if (!decision.allowed || type !== 'Resource' || fields.uri === undefined || !URI_LOOKUPS.has(action)) return decision;
    const read = uriAsServersRead(fields.uri);
    return read === undefined ? decision : this.compiled.decide(principal, action, type, { ...fields, uri: read });
  }

  rolesOf(principal: PolicyPrincipal): string[] {
    return this.compiled.rolesOf(principal);
  }

  /**
   * What a principal may see of a list: the same rules that authorize calls (an allowed
   * call lists the tool, a call denied for every argument hides it). `view` names the
   * outcome for page caches: principals with the same roles see the same pages.
   */
  listView(principal: PolicyPrincipal, kind: ListKind): { filter: ListItemFilter; view: string } | undefined {
    if (this.permitsAll) return undefined;
    const compiled = this.compiled;
    const type = SUBJECT_OF[kind];
    const filter: ListItemFilter = (item, origin) => {
      const fields: SubjectFields =
        type === 'Resource'
          ? // Judged by the upstream's own URI, as reads are (a listed URI may be a gateway one).
            { server: origin.server, uri: origin.original ?? String(item.uri ?? item.uriTemplate) }
          : { server: origin.server, name: String(item.name) };
      return compiled.decide(principal, 'list', type, fields).allowed;
    };
    return { filter, view: `${this.generation}\n${compiled.rolesOf(principal).join(',')}` };
  }
}

function policyDigest(doc: PolicyDocument, effect: 'allow' | 'deny'): string {
  return createHash('sha256').update(JSON.stringify([effect, doc])).digest('hex').slice(0, 16);
}

function permitsAll(doc: PolicyDocument, effect: 'allow' | 'deny'): boolean {
  return effect === 'allow' && Object.values(doc.roles).every((rules) => rules.length === 0);
}
