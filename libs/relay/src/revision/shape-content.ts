import { canonicalJson } from '@switchboard/core';
import { CONTENT_ADDED, fieldsToDrop, lacks, STRUCTURED_CONTENT_ADDED, type OlderRevision, type Shape } from './revision-fields.js';

type Item = Record<string, unknown>;

export const isObject = (value: unknown): value is Item => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `list` with each object in it shaped by `shape`; the same array when none changed. */
export function shapedEach(list: readonly unknown[], shape: (item: Item) => Item): unknown[] {
  let changed: unknown[] | undefined;
  list.forEach((item, i) => {
    if (!isObject(item)) return;
    const next = shape(item);
    if (next !== item) (changed ??= [...list])[i] = next;
  });
  return changed ?? (list as unknown[]);
}

/**
 * `record` with each object value shaped by `shape`; the same object when none changed.
 * Rebuilt from its entries, so a key such as `__proto__` stays a plain key.
 */
export function shapedValues(record: Item, shape: (item: Item) => Item): Item {
  let changed = false;
  const entries = Object.entries(record).map(([key, value]) => {
    const next = isObject(value) ? shape(value) : value;
    changed ||= next !== value;
    return [key, next] as const;
  });
  return changed ? Object.fromEntries(entries) : record;
}

/** `item` without `fields`; the same object when it has none of them. */
export function without(item: Item, fields: readonly string[]): Item {
  if (!fields.some((f) => f in item)) return item;
  const copy = { ...item };
  for (const f of fields) delete copy[f];
  return copy;
}

/** An object of a known shape as `version` defines it, its `annotations` included. */
export function shaped(item: Item, version: OlderRevision, shape: Shape): Item {
  const trimmed = without(item, fieldsToDrop(version, shape));
  return withShapedAnnotations(trimmed, version);
}

/** `item` with its `annotations` as `version` defines them; the same object when they need nothing. */
export function withShapedAnnotations(item: Item, version: OlderRevision): Item {
  const annotations = item.annotations;
  if (!isObject(annotations)) return item;
  const inner = without(annotations, fieldsToDrop(version, 'annotations'));
  return inner === annotations ? item : { ...item, annotations: inner };
}

/**
 * One content block as `version` can parse it. A block of a type the revision lacks becomes
 * a text block that says what it was: a host whose SDK validates the content union strictly
 * would otherwise reject the whole result for that one block, and the model still learns
 * that something was there.
 */
export function shapedBlock(block: Item, version: OlderRevision): Item {
  const added = typeof block.type === 'string' ? CONTENT_ADDED[block.type] : undefined;
  if (added && lacks(version, added)) return withShapedAnnotations(textStandIn(block), version);
  // A resource link is a Resource with a type: it has what the revision's Resource has (no
  // icons before 2025-11-25), as the resources a list names do.
  if (block.type === 'resource_link') return shaped(block, version, 'resource');
  // Text, image and embedded resource blocks (and their resource contents) differ between
  // revisions only in their annotations and _meta.
  return withShapedAnnotations(block, version);
}

function textStandIn(block: Item): Item {
  const text = block.type === 'audio' ? audioText(block) : resourceLinkText(block);
  const standIn: Item = { type: 'text', text };
  if (block.annotations !== undefined) standIn.annotations = block.annotations;
  if (block._meta !== undefined) standIn._meta = block._meta;
  return standIn;
}

function audioText(block: Item): string {
  const mime = typeof block.mimeType === 'string' ? block.mimeType : 'unknown type';
  return `[audio content (${mime}) omitted: this client's MCP protocol revision has no audio content]`;
}

function resourceLinkText(block: Item): string {
  const name = typeof block.title === 'string' ? block.title : typeof block.name === 'string' ? block.name : 'resource';
  const details = [
    typeof block.mimeType === 'string' ? block.mimeType : undefined,
    typeof block.description === 'string' ? block.description : undefined,
  ].filter((d) => d !== undefined);
  return `[linked resource "${name}": ${String(block.uri)}${details.length ? ` (${details.join('; ')})` : ''}]`;
}

/** A message (a prompt's, or one to sample from) whose one content block is shaped for `version`. */
export function shapedMessage(message: Item, version: OlderRevision): Item {
  const content = message.content;
  if (!isObject(content)) return message;
  const next = shapedBlock(content, version);
  return next === content ? message : { ...message, content: next };
}

/** A list of content blocks as `version` can parse it; the same array when nothing changed. */
export function shapedBlocks(blocks: unknown[], version: OlderRevision): unknown[] {
  return shapedEach(blocks, (block) => shapedBlock(block, version));
}

/**
 * A CallToolResult as `version` can parse it: its blocks shaped, and before 2025-06-18 its
 * `structuredContent` dropped. The spec asks a tool that returns structured content to
 * return it serialized in a text block too; a text block is added only when none carries it,
 * so the host still reads the result.
 */
export function shapedToolResult(result: Item, version: OlderRevision): Item {
  const content = Array.isArray(result.content) ? shapedBlocks(result.content, version) : result.content;
  const structured = result.structuredContent;
  const dropStructured = structured !== undefined && lacks(version, STRUCTURED_CONTENT_ADDED);
  if (content === result.content && !dropStructured) return result;
  const next: Item = { ...result, content };
  if (dropStructured) {
    delete next.structuredContent;
    if (!Array.isArray(content)) {
      next.content = [structuredText(structured)];
    } else if (!carriesJson(content, structured)) {
      next.content = [...content, structuredText(structured)];
    }
  }
  return next;
}

const structuredText = (structured: unknown): Item => ({ type: 'text', text: JSON.stringify(structured) });

/** Whether a text block holds `value` as JSON (in any key order or layout). */
function carriesJson(blocks: unknown[], value: unknown): boolean {
  let expected: string | undefined;
  return blocks.some((block) => {
    if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') return false;
    const text = block.text.trim();
    // Only text that could be the JSON of an object or array is parsed.
    if (!text.startsWith('{') && !text.startsWith('[')) return false;
    try {
      expected ??= canonicalJson(value);
      return canonicalJson(JSON.parse(text)) === expected;
    } catch {
      return false;
    }
  });
}
