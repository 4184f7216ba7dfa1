import { elicitationContentProblems } from '@switchboard/inbox';
import type { Item } from '../relay.types.js';
import { TOOL_BLOCKS } from '../revision/revision-fields.js';
import { elicitationMode } from './host-capability.js';

/** A host's answer that may go to the upstream, or why it may not. */
export type CheckedAnswer = { result: Item } | { problems: string[] };

const ACTIONS = ['accept', 'decline', 'cancel'];

/**
 * Checks a host's answer to a relayed request before the upstream gets it. To the upstream
 * the gateway is the client, and the spec has clients validate an elicitation's answer
 * against the schema they were asked with: an upstream must not receive what its own
 * request ruled out (a form's content of the wrong type, content for a URL, roots that are
 * not files) just because a host sent it. The inbox checks a person's answers the same way
 * (`elicitationContentProblems`).
 */
export function checkHostAnswer(method: string, params: Item, answer: Item): CheckedAnswer {
  switch (method) {
    case 'elicitation/create':
      return checkElicitation(params, answer);
    case 'sampling/createMessage':
      return checkSampling(params, answer);
    case 'roots/list':
      return outcome(answer, rootsResultProblems(answer));
    default:
      return { result: answer };
  }
}

function checkElicitation(params: Item, answer: Item): CheckedAnswer {
  const { action, content, _meta } = answer;
  if (typeof action !== 'string' || !ACTIONS.includes(action)) return { problems: [`action must be one of ${ACTIONS.join(', ')}`] };
  // Only these keys mean anything to the upstream; whatever else a host added stays here.
  const meta = isItem(_meta) ? { _meta } : {};
  if (action !== 'accept') {
    // What a user typed into a form they then declined is not the upstream's to see.
    return { result: { action, ...meta } };
  }
  if (elicitationMode(params) === 'url') {
    return content === undefined ? { result: { action, ...meta } } : { problems: ['a url-mode elicitation is accepted without content'] };
  }
  const problems = elicitationContentProblems(params.requestedSchema as Item, content ?? {}).map((p) => `content: ${p}`);
  return outcome({ action, ...(content !== undefined && { content }), ...meta }, problems);
}

/** The blocks a sampled message may hold (2025-11-25: SamplingMessageContentBlock). */
const SAMPLED = new Set(['text', 'image', 'audio', 'tool_use', 'tool_result']);

/**
 * CreateMessageResult: who said it, what, and which model. A list of blocks and the tool
 * blocks answer only a request that offered `tools` (2025-11-25); without them the result is
 * one text, image or audio block, which is what an upstream's SDK accepts. A list of one block
 * becomes that block; a list of several, a tool block or a block of no sampling kind
 * (resource_link, say) is refused, so the upstream never sees what it did not ask for.
 */
function checkSampling(params: Item, answer: Item): CheckedAnswer {
  const problems: string[] = [];
  if (answer.role !== 'user' && answer.role !== 'assistant') problems.push('role must be user or assistant');
  const { content } = answer;
  const blocks = Array.isArray(content) ? content : [content];
  const toolsOffered = Array.isArray(params.tools) && params.tools.length > 0;
  if (blocks.length === 0 || !blocks.every((b) => isItem(b) && typeof b.type === 'string')) {
    problems.push('content must be a content block (with a type) or a non-empty list of them');
  } else {
    problems.push(...contentProblems(blocks as Item[], toolsOffered));
  }
  if (typeof answer.model !== 'string') problems.push('model must be a string');
  if (answer.stopReason !== undefined && typeof answer.stopReason !== 'string') problems.push('stopReason must be a string');
  if (problems.length > 0) return { problems };
  return { result: !toolsOffered && Array.isArray(content) ? { ...answer, content: content[0] } : answer };
}

function contentProblems(blocks: Item[], toolsOffered: boolean): string[] {
  const problems: string[] = [];
  const foreign = [...new Set(blocks.map((b) => b.type as string).filter((t) => !SAMPLED.has(t)))];
  if (foreign.length > 0) problems.push(`content may not hold ${foreign.join(', ')} blocks (a sampled message holds text, image, audio, tool_use or tool_result)`);
  if (toolsOffered) return problems;
  if (blocks.length > 1) problems.push(`content must be one block when the request offered no tools (it has ${blocks.length})`);
  const tools = [...new Set(blocks.map((b) => b.type as string).filter((t) => TOOL_BLOCKS.has(t)))];
  if (tools.length > 0) problems.push(`content may not hold ${tools.join(', ')} blocks when the request offered no tools`);
  return problems;
}

/** ListRootsResult: a list of roots, each a file:// URI with an optional name. */
function rootsResultProblems(answer: Item): string[] {
  const { roots } = answer;
  if (!Array.isArray(roots)) return ['roots must be a list'];
  const problems: string[] = [];
  roots.forEach((root, i) => {
    if (!isItem(root) || typeof root.uri !== 'string') problems.push(`roots[${i}] must be an object with a uri`);
    else if (!isFileUri(root.uri)) problems.push(`roots[${i}].uri must be a file:// URI`);
    else if (root.name !== undefined && typeof root.name !== 'string') problems.push(`roots[${i}].name must be a string`);
  });
  return problems;
}

const outcome = (result: Item, problems: string[]): CheckedAnswer => (problems.length > 0 ? { problems } : { result });

const isFileUri = (uri: string): boolean => URL.canParse(uri) && new URL(uri).protocol === 'file:';

const isItem = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);
