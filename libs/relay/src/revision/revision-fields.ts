/**
 * What the legacy protocol revisions added to the objects a host receives (and to the
 * requests an upstream receives), by the revision that added it: a host or upstream on an
 * older revision gets these objects without what its revision does not define. Read off each revision's schema (modelcontextprotocol/specification
 * schema/<revision>/schema.json) and changelog:
 *
 * - 2025-03-26: tool annotations, audio content (in results and sampling messages), the
 *   progress notification's `message`, the `completions` server capability.
 * - 2025-06-18: `title` on tools, prompts, prompt arguments, resources, templates and
 *   implementation info; a tool's `outputSchema` and a result's `structuredContent`;
 *   `resource_link` content; `lastModified` in annotations; the `elicitation/create` request.
 *   In the requests to a server: completion/complete's `context` and a prompt reference's
 *   `title`.
 * - 2025-11-25: `icons` on tools, prompts, resources, templates and implementation info; an
 *   implementation's `description` and `websiteUrl`; a tool's `execution`; the `tasks`
 *   server capability. In the requests to a client: `task` on sampling and elicitation;
 *   sampling's `tools`, `toolChoice`, `tool_use` and `tool_result` blocks and messages
 *   holding a list of blocks; elicitation's `mode` (and with it url mode), a form's
 *   `$schema`, `default` on its string, number and enum fields (booleans had one), titled
 *   choices (`oneOf`) and multi-select (`array`) fields.
 *
 * Only fields a later revision defines are dropped. Fields no revision defines (a vendor's
 * own) pass as they are, as does `_meta`: every revision lets objects carry what they do not
 * know about, and such fields break no host that follows an older schema.
 */
export type OlderRevision = '2024-11-05' | '2025-03-26' | '2025-06-18';
type AddedIn = Exclude<OlderRevision, '2024-11-05'> | '2025-11-25';

/** The kinds of object whose fields depend on the revision. */
export type Shape =
  | 'tool'
  | 'prompt'
  | 'promptArgument'
  | 'resource'
  | 'resourceTemplate'
  | 'implementation'
  | 'serverCapabilities'
  | 'annotations'
  | 'progress'
  | 'samplingRequest'
  | 'elicitRequest'
  | 'requestedSchema'
  | 'formField'
  | 'completeRequest'
  | 'promptReference';

const FIELDS_ADDED: Record<Shape, Record<string, AddedIn>> = {
  tool: { annotations: '2025-03-26', title: '2025-06-18', outputSchema: '2025-06-18', icons: '2025-11-25', execution: '2025-11-25' },
  prompt: { title: '2025-06-18', icons: '2025-11-25' },
  promptArgument: { title: '2025-06-18' },
  resource: { title: '2025-06-18', icons: '2025-11-25' },
  resourceTemplate: { title: '2025-06-18', icons: '2025-11-25' },
  implementation: { title: '2025-06-18', icons: '2025-11-25', description: '2025-11-25', websiteUrl: '2025-11-25' },
  serverCapabilities: { completions: '2025-03-26', tasks: '2025-11-25' },
  annotations: { lastModified: '2025-06-18' },
  progress: { message: '2025-03-26' },
  samplingRequest: { task: '2025-11-25' },
  elicitRequest: { mode: '2025-11-25', task: '2025-11-25' },
  requestedSchema: { $schema: '2025-11-25' },
  // A string, number or enum field; a boolean field had `default` from the start.
  formField: { default: '2025-11-25' },
  completeRequest: { context: '2025-06-18' },
  // BaseMetadata's title; a ref/resource has had only `uri` in every revision.
  promptReference: { title: '2025-06-18' },
};

/** Content block types, by the revision that added them (text, image and resource are in all). */
/** The sampling blocks of tool use (2025-11-25), which answer only a request that offered tools. */
export const TOOL_BLOCKS: ReadonlySet<unknown> = new Set(['tool_use', 'tool_result']);

export const CONTENT_ADDED: Readonly<Record<string, AddedIn>> = { audio: '2025-03-26', resource_link: '2025-06-18' };

/** CallToolResult.structuredContent came with 2025-06-18. */
export const STRUCTURED_CONTENT_ADDED: AddedIn = '2025-06-18';

/** The requests a server sends a client, by the revision that added them (sampling and roots are in all). */
export const REQUEST_ADDED: Readonly<Record<string, AddedIn>> = { 'elicitation/create': '2025-06-18' };

/**
 * What 2025-11-25 added to those requests that cannot be left out without changing the
 * question, so a host on an older revision cannot be asked it: tool use in sampling
 * (`tools`, `toolChoice`, `tool_use` and `tool_result` blocks), url-mode elicitation, and
 * multi-select form fields. Messages holding a list of blocks and titled choices came with
 * it too; those are mapped to what older revisions have.
 */
export const SAMPLING_TOOLS_ADDED: AddedIn = '2025-11-25';
export const URL_ELICITATION_ADDED: AddedIn = '2025-11-25';
export const MULTI_SELECT_ADDED: AddedIn = '2025-11-25';
export const BLOCK_LISTS_ADDED: AddedIn = '2025-11-25';
export const TITLED_CHOICES_ADDED: AddedIn = '2025-11-25';

const OLDER: ReadonlySet<string> = new Set<OlderRevision>(['2024-11-05', '2025-03-26', '2025-06-18']);

/**
 * Whether what a host receives must be shaped for its revision. Only the older legacy
 * revisions are: the newest, the stateless one and a session not yet initialized get what
 * the gateway has, untouched.
 */
export function isOlderRevision(version: string): version is OlderRevision {
  return OLDER.has(version);
}

/** Whether `version` predates `added` (revisions are dates, so they order as strings). */
export function lacks(version: OlderRevision, added: AddedIn): boolean {
  return version < added;
}

const dropped = new Map<string, readonly string[]>();

/** The fields of a `shape` object that `version` does not define; computed once per pair. */
export function fieldsToDrop(version: OlderRevision, shape: Shape): readonly string[] {
  const key = `${version} ${shape}`;
  let fields = dropped.get(key);
  if (!fields) {
    fields = Object.entries(FIELDS_ADDED[shape])
      .filter(([, added]) => lacks(version, added))
      .map(([field]) => field);
    dropped.set(key, fields);
  }
  return fields;
}

/** Whether a host of `version` gets structuredContent and outputSchemas (2025-06-18 and later). */
export function knowsStructuredContent(version: string): boolean {
  return !isOlderRevision(version) || !lacks(version, STRUCTURED_CONTENT_ADDED);
}
