import type { Item } from '../relay.types.js';

/**
 * Checks a structuredContent value against a tool's outputSchema: undefined when it conforms,
 * else what is wrong (output-schemas.ts).
 */
export type OutputCheck = (structured: unknown) => string | undefined;

/** What an invalid result's error names at most: the first problems say enough, and stay short. */
const MAX_PROBLEMS = 3;

/** What an invalid result is found to have, in the order found; the first MAX_PROBLEMS say enough. */
class Problems {
  private list: string[] | undefined;

  add(problem: string): void {
    (this.list ??= []).push(problem);
  }

  get full(): boolean {
    return (this.list?.length ?? 0) >= MAX_PROBLEMS;
  }

  /** Each item of `items` that `problemOf` finds wrong, as `where[i] <problem>`, while there is room. */
  eachOf(items: unknown[], where: string, problemOf: (item: unknown) => string | undefined): void {
    for (let i = 0; i < items.length && !this.full; i++) {
      const problem = problemOf(items[i]);
      if (problem !== undefined) this.add(`${where}[${i}] ${problem}`);
    }
  }

  /** Undefined when nothing was found. */
  found(): string[] | undefined {
    return this.list?.slice(0, MAX_PROBLEMS);
  }
}

/**
 * Why an upstream's tools/call result would make a conforming client throw, or undefined when
 * it would not. Only what the spec's schema requires is checked: unknown fields and unknown
 * content types pass (a later revision may add them), and only a tool that declared an
 * outputSchema has its structuredContent judged by it (not when the result is an error, as the
 * SDK's client does). Cheap on purpose: it runs on every call's answer.
 */
export function toolResultProblems(result: Item, outputCheck?: OutputCheck): string[] | undefined {
  const problems = new Problems();
  const { content, isError, structuredContent } = result;
  if (!Array.isArray(content)) problems.add(content === undefined ? 'content is missing' : 'content is not an array');
  else problems.eachOf(content, 'content', blockProblem);
  if (isError !== undefined && typeof isError !== 'boolean') problems.add('isError is not a boolean');
  if (structuredContent !== undefined && !isItem(structuredContent)) problems.add('structuredContent is not an object');
  metaProblem(result, problems);
  if (outputCheck && isError !== true && !problems.full) {
    if (structuredContent === undefined) problems.add('structuredContent is missing, and the tool declares an outputSchema');
    else if (isItem(structuredContent)) {
      const mismatch = outputCheck(structuredContent);
      if (mismatch !== undefined) problems.add(`structuredContent does not match the tool's outputSchema: ${mismatch}`);
    }
  }
  return problems.found();
}

/** Why a resources/read result would make a conforming client throw: its contents, each a text or a blob of a URI. */
export function readResultProblems(result: Item): string[] | undefined {
  const problems = new Problems();
  const { contents } = result;
  if (!Array.isArray(contents)) problems.add(contents === undefined ? 'contents is missing' : 'contents is not an array');
  else problems.eachOf(contents, 'contents', resourceContentsProblem);
  metaProblem(result, problems);
  return problems.found();
}

/** Why a prompts/get result would make a conforming client throw: its messages, each a role and one content block. */
export function promptResultProblems(result: Item): string[] | undefined {
  const problems = new Problems();
  const { messages, description } = result;
  if (!Array.isArray(messages)) problems.add(messages === undefined ? 'messages is missing' : 'messages is not an array');
  else {
    for (let i = 0; i < messages.length && !problems.full; i++) {
      const message: unknown = messages[i];
      if (!isItem(message)) problems.add(`messages[${i}] is not an object`);
      else if (message.role !== 'user' && message.role !== 'assistant') problems.add(`messages[${i}].role is neither user nor assistant`);
      else {
        const problem = blockProblem(message.content);
        if (problem !== undefined) problems.add(`messages[${i}].content ${problem}`);
      }
    }
  }
  if (description !== undefined && typeof description !== 'string') problems.add('description is not a string');
  metaProblem(result, problems);
  return problems.found();
}

/**
 * Why a completion/complete result would make a conforming client throw: a `completion` whose
 * values are strings, its total a number and hasMore a boolean. Too many values is no problem
 * here: the gateway cuts them (completion-values.ts), as the spec lets a server say there are more.
 */
export function completionResultProblems(result: Item): string[] | undefined {
  const problems = new Problems();
  const { completion } = result;
  if (!isItem(completion)) problems.add(completion === undefined ? 'completion is missing' : 'completion is not an object');
  else {
    const { values, total, hasMore } = completion;
    if (!Array.isArray(values)) problems.add(values === undefined ? 'completion.values is missing' : 'completion.values is not an array');
    else problems.eachOf(values, 'completion.values', (value) => (typeof value === 'string' ? undefined : 'is not a string'));
    if (total !== undefined && !Number.isInteger(total)) problems.add('completion.total is not an integer');
    if (hasMore !== undefined && typeof hasMore !== 'boolean') problems.add('completion.hasMore is not a boolean');
  }
  metaProblem(result, problems);
  return problems.found();
}

/**
 * What makes one content block unreadable: no object, no string type, or a known type
 * without the fields that type requires. A type this gateway does not know passes.
 */
function blockProblem(block: unknown): string | undefined {
  if (!isItem(block)) return 'is not an object';
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? undefined : 'is a text block without a string text';
    case 'image':
    case 'audio':
      return typeof block.data === 'string' && typeof block.mimeType === 'string' ? undefined : `is an ${block.type} block without string data and mimeType`;
    case 'resource_link':
      return typeof block.uri === 'string' && typeof block.name === 'string' ? undefined : 'is a resource_link without a string uri and name';
    case 'resource': {
      const problem = resourceContentsProblem(block.resource);
      return problem === undefined ? undefined : `is an embedded resource whose resource ${problem}`;
    }
    default:
      return typeof block.type === 'string' ? undefined : 'has no string type';
  }
}

function resourceContentsProblem(contents: unknown): string | undefined {
  if (!isItem(contents)) return 'is not an object';
  if (typeof contents.uri !== 'string') return 'has no string uri';
  if (typeof contents.text !== 'string' && typeof contents.blob !== 'string') return 'has neither a string text nor a string blob';
  return undefined;
}

function metaProblem(result: Item, problems: Problems): void {
  if (result._meta !== undefined && !isItem(result._meta)) problems.add('_meta is not an object');
}

const isItem = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);
