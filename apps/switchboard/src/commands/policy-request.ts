import { parseGatewayUri } from '@switchboard/catalog';
import { closestKey, type GatewayConfig } from '@switchboard/config';
import { sanitizePrefix } from '@switchboard/core';
import { POLICY_ACTIONS, type PolicyAction, type SubjectFields, type SubjectType } from '@switchboard/policy';
import { usageError } from './command-error.js';

/** What `policy check` is asked about, as its options give it. */
export interface PolicyRequestOptions {
  action?: string;
  tool?: string;
  prompt?: string;
  resource?: string;
  server?: string;
  args?: string;
}

/** Actions the daemon decides on an upstream as a whole: what it asks of the user, its log lines. */
const SERVER_ACTIONS: readonly PolicyAction[] = ['sample', 'elicit', 'log'];

/**
 * The request `policy check` decides, as the daemon would see it. A mistyped action or
 * arguments that are not a JSON object are usage errors: decided as given, they would only ever
 * say "deny", which reads like an answer.
 */
export function policyRequestOf(values: PolicyRequestOptions, config: GatewayConfig): [SubjectType, string, SubjectFields] {
  const action = values.action;
  if (action !== undefined && !(POLICY_ACTIONS as readonly string[]).includes(action)) {
    const meant = closestKey(action, POLICY_ACTIONS);
    throw usageError(`--action must be one of ${POLICY_ACTIONS.join(', ')}${meant ? ` (did you mean ${meant}?)` : ''}`);
  }
  if (action !== undefined && SERVER_ACTIONS.includes(action as PolicyAction)) {
    if (values.server === undefined) throw usageError(`--action ${action} is decided per upstream: give --server SERVER`);
    return ['Server', action, { server: values.server }];
  }
  const given = [values.tool, values.prompt, values.resource].filter((v) => v !== undefined).length;
  if (given !== 1) throw usageError('give one of --tool NAME, --prompt NAME or --resource URI');
  // A prefixed public name says its upstream (github__create_issue); --server says it otherwise.
  // So does a gateway URI (switchboard://PREFIX/ORIGINAL, shown for a resource whose URI
  // collides), which is judged by the URI it wraps, as the daemon judges it.
  const wrapped = values.resource === undefined ? undefined : parseGatewayUri(values.resource);
  const name = values.tool ?? values.prompt;
  const prefix = wrapped?.prefix ?? (name?.includes(config.separator) ? name.slice(0, name.indexOf(config.separator)) : undefined);
  const server = values.server ?? (prefix === undefined ? undefined : serverOfPrefix(config, prefix));
  if (server === undefined) throw usageError('give --server SERVER: the upstream that serves it');
  const args = values.args === undefined ? {} : argumentsOf(values.args);
  if (values.tool !== undefined) return ['Tool', action ?? 'call', { server, name: values.tool, args }];
  if (values.prompt !== undefined) return ['Prompt', action ?? 'get', { server, name: values.prompt, args }];
  return ['Resource', action ?? 'read', { server, uri: wrapped?.original ?? values.resource! }];
}

/** The upstream whose public prefix (its alias, else its name, as the catalog writes it) is `prefix`. */
function serverOfPrefix(config: GatewayConfig, prefix: string): string {
  return config.servers.find((s) => sanitizePrefix(s.alias ?? s.name) === prefix)?.name ?? prefix;
}

/**
 * `--args`: a JSON object, as a tools/call's or prompts/get's arguments are. Text that is no
 * JSON at all is told apart from JSON of another kind: a stray quote the shell ate is fixed
 * where the parser stopped, not by making the value an object.
 */
function argumentsOf(text: string): Record<string, unknown> {
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch (err) {
    throw usageError(`--args is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw usageError('--args must be a JSON object');
  return args as Record<string, unknown>;
}
