import { rememberJsonText, type JsonRpcMessage } from '@switchboard/core';
import { isOlderRevision, type OlderRevision, type Shape } from './revision-fields.js';
import { isObject, shaped, shapedEach, shapedMessage, shapedToolResult } from './shape-content.js';

type Item = Record<string, unknown>;

/**
 * What a host receives, as its negotiated revision defines it (the 2025-03-26 lifecycle:
 * both parties SHOULD respect the negotiated version). The gateway merges upstreams of any
 * revision, and an older host must not receive fields and content types it has never heard
 * of. Applied at the two places every message to a host passes: results in the dispatcher,
 * by method, and notifications in the session's send.
 *
 * A host on the newest revision gets exactly what it got before: the same object, with no
 * copy and no walk (one Set lookup). Whatever changes builds new objects; the input is
 * never touched (results may be cached pages shared by every host).
 */
export function shapeResult(method: string, result: Item, version: string): Item {
  if (!isOlderRevision(version)) return result;
  const shape = RESULT_SHAPERS[method];
  if (!shape) return result;
  if (!LIST_METHODS.has(method)) return shape(result, version);
  // List pages are cached, immutable objects served to many hosts: shape each once per revision.
  let byVersion = shapedPages.get(result);
  const hit = byVersion?.get(version);
  if (hit) return hit;
  const page = shape(result, version);
  if (page !== result) rememberJsonText(page, JSON.stringify(page));
  if (!byVersion) shapedPages.set(result, (byVersion = new Map()));
  byVersion.set(version, page);
  return page;
}

/** A notification as the host's revision defines it; any other message passes untouched. */
export function shapeNotification(message: JsonRpcMessage, version: string): JsonRpcMessage {
  if (!isOlderRevision(version) || !('method' in message) || 'id' in message) return message;
  if (message.method !== 'notifications/progress' || !message.params) return message;
  const params = shaped(message.params, version, 'progress');
  return params === message.params ? message : { ...message, params };
}

const shapedPages = new WeakMap<object, Map<string, Item>>();

type ResultShaper = (result: Item, version: OlderRevision) => Item;

/** Each item of `result[key]` shaped by `shapeItem`; the same result when none changed. */
const eachOf =
  (key: string, shapeItem: (item: Item, version: OlderRevision) => Item): ResultShaper =>
  (result, version) => {
    const list = result[key];
    if (!Array.isArray(list)) return result;
    const shapedList = shapedEach(list, (item) => shapeItem(item, version));
    return shapedList === list ? result : { ...result, [key]: shapedList };
  };

const as = (shape: Shape) => (item: Item, version: OlderRevision) => shaped(item, version, shape);

const shapedPrompt = (prompt: Item, version: OlderRevision): Item => {
  const trimmed = shaped(prompt, version, 'prompt');
  return eachOf('arguments', as('promptArgument'))(trimmed, version);
};

/**
 * A tool as the host's revision has it. Before 2025-06-18 a tool had no `title`; 2025-03-26
 * has one in its annotations (still the display name after a tool's own title came: the
 * spec's order is title, annotations.title, name), so there the title moves rather than
 * go, unless the annotations name one already.
 */
const shapedTool = (tool: Item, version: OlderRevision): Item => {
  const trimmed = shaped(tool, version, 'tool');
  const { title, annotations } = tool;
  if (version !== '2025-03-26' || typeof title !== 'string') return trimmed;
  if (isObject(annotations) && annotations.title !== undefined) return trimmed;
  return { ...trimmed, annotations: { ...(isObject(annotations) ? annotations : {}), title } };
};

const shapedInitializeResult: ResultShaper = (result, version) => {
  const { capabilities, serverInfo } = result;
  const caps = isObject(capabilities) ? shaped(capabilities, version, 'serverCapabilities') : capabilities;
  const info = isObject(serverInfo) ? shaped(serverInfo, version, 'implementation') : serverInfo;
  return caps === capabilities && info === serverInfo ? result : { ...result, capabilities: caps, serverInfo: info };
};


/** The results whose content depends on the revision; others (ping, read, complete...) pass. */
const RESULT_SHAPERS: Record<string, ResultShaper> = {
  initialize: shapedInitializeResult,
  'tools/list': eachOf('tools', shapedTool),
  'tools/call': shapedToolResult,
  'prompts/list': eachOf('prompts', shapedPrompt),
  'prompts/get': eachOf('messages', shapedMessage),
  'resources/list': eachOf('resources', as('resource')),
  'resources/templates/list': eachOf('resourceTemplates', as('resourceTemplate')),
};

const LIST_METHODS: ReadonlySet<string> = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']);
