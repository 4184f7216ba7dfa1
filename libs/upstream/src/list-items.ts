import { MAX_JSON_DEPTH, MAX_URI_CHARS, nestsDeeperThan } from '@switchboard/core';

type Item = Record<string, unknown>;

const isObject = (value: unknown): value is Item => typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/**
 * Why an item of an upstream's list cannot be served, or undefined when it can: the fields
 * every later step relies on (merging, naming, pinning, policy) and that an SDK host checks
 * before it accepts the list at all. One tool with `inputSchema: "x"` would otherwise make
 * an SDK host's listTools() throw, and with it the tools of every other upstream.
 */
export function unservableReason(key: string, item: unknown, runsTasks = false): string | undefined {
  if (!isObject(item)) return 'not an object';
  // Every walk on the way (the list's size, pinning's fingerprint, a host's own parse) is
  // recursive: one schema nested thousands deep overflowed the stack and failed the read of
  // the whole list, so the upstream's other tools were not served either.
  if (nestsDeeperThan(item, MAX_JSON_DEPTH)) return `it nests deeper than ${MAX_JSON_DEPTH} levels`;
  switch (key) {
    case 'tools':
      if (!isText(item.name)) return 'no name';
      if (!isObject(item.inputSchema) || item.inputSchema.type !== 'object') return 'inputSchema is not an object schema';
      if (item.outputSchema !== undefined && (!isObject(item.outputSchema) || item.outputSchema.type !== 'object')) {
        return 'outputSchema is not an object schema';
      }
      // Such a tool may only be called as a task. The gateway runs the task for the host
      // (task-calls.ts), which it can only do on an upstream that runs tool calls as tasks.
      if (taskOnly(item) && !runsTasks) {
        return 'it can only be called as a task (execution.taskSupport "required"), and the upstream does not run tool calls as tasks (2025-11-25, capabilities.tasks.requests.tools.call)';
      }
      return undefined;
    case 'prompts':
      if (!isText(item.name)) return 'no name';
      if (item.arguments !== undefined && (!Array.isArray(item.arguments) || !item.arguments.every((a) => isObject(a) && isText(a.name)))) {
        return 'arguments is not a list of named arguments';
      }
      return undefined;
    case 'resources':
      return !isText(item.uri) ? 'no uri' : !isText(item.name) ? 'no name' : overlong('uri', item.uri);
    case 'resourceTemplates':
      return !isText(item.uriTemplate) ? 'no uriTemplate' : !isText(item.name) ? 'no name' : overlong('uriTemplate', item.uriTemplate);
    default:
      return undefined;
  }
}

/** A host may send no resource URI (nor a completion's template) longer than MAX_URI_CHARS: one listed could not be read. */
function overlong(field: string, uri: string): string | undefined {
  if (uri.length <= MAX_URI_CHARS) return undefined;
  return `its ${field} is ${uri.length} characters, and a host may send at most ${MAX_URI_CHARS}`;
}

/** A tool whose `execution.taskSupport` is "required": callable only as a task (2025-11-25). */
export function taskOnly(item: Item): boolean {
  return isObject(item.execution) && item.execution.taskSupport === 'required';
}

/** A tool whose `execution.taskSupport` is "optional": callable as a task or not (2025-11-25). */
export function taskOptional(item: Item): boolean {
  return isObject(item.execution) && item.execution.taskSupport === 'optional';
}

/**
 * An item as the gateway serves it. A tool's `execution` (2025-11-25) tells hosts whether
 * they may call it as a task; the gateway declares no `tasks` capability and ignores a
 * call's task augmentation, as the spec asks of a receiver without it, so it offers none.
 * A task-only tool too is served without it, as the plain tool it is to every host: the
 * gateway calls it as a task upstream and answers the host with the result (task-calls.ts),
 * and a host told "required" by a server without the capability could not call it at all.
 */
export function servedItem(key: string, item: Item): Item {
  if (key !== 'tools' || !('execution' in item)) return item;
  const { execution: _notRelayed, ...served } = item;
  return served;
}

/** An item as a log line names it: its name or URI, cut short, else its type. */
export function describeItem(item: unknown): string {
  if (typeof item !== 'object' || item === null) return JSON.stringify(item) ?? String(item);
  const { name, uri, uriTemplate } = item as Item;
  const label = [name, uri, uriTemplate].find((v) => typeof v === 'string');
  return typeof label === 'string' ? JSON.stringify(label.slice(0, 80)) : Array.isArray(item) ? 'an array' : 'an object without a name';
}
