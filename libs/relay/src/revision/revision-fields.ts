/**
 * What the legacy protocol revisions added to the objects a host receives, by the revision
 * that added it: a host on an older revision gets these objects without what its revision
 * does not define. Read off each revision's schema (modelcontextprotocol/specification
 * schema/<revision>/schema.json) and changelog:
 *
 * - 2025-03-26: tool annotations, audio content, the progress notification's `message`,
 *   the `completions` server capability.
 * - 2025-06-18: `title` on tools, prompts, prompt arguments, resources, templates and
 *   implementation info; a tool's `outputSchema` and a result's `structuredContent`;
 *   `resource_link` content; `lastModified` in annotations.
 * - 2025-11-25: `icons` on tools, prompts, resources, templates and implementation info; an
 *   implementation's `description` and `websiteUrl`; a tool's `execution`; the `tasks`
 *   server capability.
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
  | 'progress';

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
};

/** Content block types, by the revision that added them (text, image and resource are in all). */
export const CONTENT_ADDED: Readonly<Record<string, AddedIn>> = { audio: '2025-03-26', resource_link: '2025-06-18' };

/** CallToolResult.structuredContent came with 2025-06-18. */
export const STRUCTURED_CONTENT_ADDED: AddedIn = '2025-06-18';

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
