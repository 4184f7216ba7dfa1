import { BLOCK_LISTS_ADDED, CONTENT_ADDED, isOlderRevision, lacks, type OlderRevision } from './revision-fields.js';
import { Unanswerable } from './shape-server-request.js';
import { isObject, withShapedAnnotations } from './shape-content.js';

type Item = Record<string, unknown>;

/** The block types a sampling result may hold before 2025-11-25 (audio only from 2025-03-26 on: CONTENT_ADDED). */
const SAMPLED_BEFORE_TOOLS: ReadonlySet<unknown> = new Set(['text', 'image', 'audio']);

/**
 * A host's answer to a relayed request as the upstream's negotiated revision defines it,
 * the other way round from shapeServerRequest: a host on a newer revision than the upstream
 * may answer in ways the upstream's revision has no words for, and a server with a strict
 * schema fails the request (and with it the tool call that asked) for them. Only sampling's
 * result differs between revisions: before 2025-11-25 its `content` is one block, of text or
 * image (and audio from 2025-03-26). A list of one block becomes that block; a list of
 * several, or a block of a kind the revision lacks (audio before 2025-03-26; tool_use,
 * tool_result or any other), cannot be said without losing or changing the answer:
 * Unanswerable, and the upstream gets an error rather than part of it. An elicitation's
 * answer is already bound to the form its upstream asked (host-answer.ts), and roots have
 * had the same fields in every revision (a root's `_meta` passes, as `_meta` does anywhere).
 */
export function shapeHostAnswer(method: string, answer: Item, version: string | undefined): Item | Unanswerable {
  if (method !== 'sampling/createMessage' || version === undefined || !isOlderRevision(version)) return answer;
  const { content } = answer;
  let block = content;
  if (Array.isArray(content)) {
    if (content.length !== 1 && lacks(version, BLOCK_LISTS_ADDED)) return new Unanswerable(`a sampling result of ${content.length} content blocks`);
    block = content[0];
  }
  // host-answer.ts has checked that each block is an object with a type.
  if (!isObject(block)) return answer;
  const problem = blockProblem(block.type, version);
  if (problem) return new Unanswerable(problem);
  const shaped = withShapedAnnotations(block, version);
  return shaped === content ? answer : { ...answer, content: shaped };
}

/** Why a sampled block of `type` cannot reach an upstream on `version` (tool_use and tool_result came with 2025-11-25). */
function blockProblem(type: unknown, version: OlderRevision): string | undefined {
  const added = typeof type === 'string' ? CONTENT_ADDED[type] : undefined;
  const known = SAMPLED_BEFORE_TOOLS.has(type) && !(added && lacks(version, added));
  return known ? undefined : `${String(type)} content in a sampling result`;
}
