import type { Item } from '../relay.types.js';

/**
 * Checks a structuredContent value against a tool's outputSchema: undefined when it conforms,
 * else what is wrong (output-schemas.ts).
 */
export type OutputCheck = (structured: unknown) => string | undefined;

/** What an invalid result's error names at most: the first problems say enough, and stay short. */
const MAX_PROBLEMS = 3;

/**
 * Why an upstream's tools/call result would make a conforming client throw, or undefined when
 * it would not. Only what the spec's schema requires is checked: unknown fields and unknown
 * content types pass (a later revision may add them), and only a tool that declared an
 * outputSchema has its structuredContent judged by it (not when the result is an error, as the
 * SDK's client does). Cheap on purpose: it runs on every call's answer.
 */
export function toolResultProblems(result: Item, outputCheck?: OutputCheck): string[] | undefined {
  let problems: string[] | undefined;
  const add = (problem: string) => (problems ??= []).push(problem);
  const { content, isError, structuredContent } = result;
  if (!Array.isArray(content)) add(content === undefined ? 'content is missing' : 'content is not an array');
  else blockProblems(content, 'content', add);
  if (isError !== undefined && typeof isError !== 'boolean') add('isError is not a boolean');
  if (structuredContent !== undefined && !isItem(structuredContent)) add('structuredContent is not an object');
  metaProblem(result, add);
  if (outputCheck && isError !== true && (problems === undefined || problems.length < MAX_PROBLEMS)) {
    if (structuredContent === undefined) add('structuredContent is missing, and the tool declares an outputSchema');
    else if (isItem(structuredContent)) {
      const mismatch = outputCheck(structuredContent);
      if (mismatch !== undefined) add(`structuredContent does not match the tool's outputSchema: ${mismatch}`);
    }
  }
  return problems?.slice(0, MAX_PROBLEMS);
}

/** Why a resources/read result would make a conforming client throw: its contents, each a text or a blob of a URI. */
export function readResultProblems(result: Item): string[] | undefined {
  let problems: string[] | undefined;
  const add = (problem: string) => (problems ??= []).push(problem);
  const { contents } = result;
  if (!Array.isArray(contents)) add(contents === undefined ? 'contents is missing' : 'contents is not an array');
  else {
    for (let i = 0; i < contents.length && (problems?.length ?? 0) < MAX_PROBLEMS; i++) {
      const problem = resourceContentsProblem(contents[i]);
      if (problem !== undefined) add(`contents[${i}] ${problem}`);
    }
  }
  metaProblem(result, add);
  return problems?.slice(0, MAX_PROBLEMS);
}

/** Why a prompts/get result would make a conforming client throw: its messages, each a role and one content block. */
export function promptResultProblems(result: Item): string[] | undefined {
  let problems: string[] | undefined;
  const add = (problem: string) => (problems ??= []).push(problem);
  const { messages, description } = result;
  if (!Array.isArray(messages)) add(messages === undefined ? 'messages is missing' : 'messages is not an array');
  else {
    for (let i = 0; i < messages.length && (problems?.length ?? 0) < MAX_PROBLEMS; i++) {
      const message: unknown = messages[i];
      if (!isItem(message)) add(`messages[${i}] is not an object`);
      else if (message.role !== 'user' && message.role !== 'assistant') add(`messages[${i}].role is neither user nor assistant`);
      else {
        const problem = blockProblem(message.content);
        if (problem !== undefined) add(`messages[${i}].content ${problem}`);
      }
    }
  }
  if (description !== undefined && typeof description !== 'string') add('description is not a string');
  metaProblem(result, add);
  return problems?.slice(0, MAX_PROBLEMS);
}

/**
 * Why a completion/complete result would make a conforming client throw: a `completion` whose
 * values are strings, its total a number and hasMore a boolean. Too many values is no problem
 * here: the gateway cuts them (completion-values.ts), as the spec lets a server say there are more.
 */
export function completionResultProblems(result: Item): string[] | undefined {
  let problems: string[] | undefined;
  const add = (problem: string) => (problems ??= []).push(problem);
  const { completion } = result;
  if (!isItem(completion)) add(completion === undefined ? 'completion is missing' : 'completion is not an object');
  else {
    const { values, total, hasMore } = completion;
    if (!Array.isArray(values)) add(values === undefined ? 'completion.values is missing' : 'completion.values is not an array');
    else {
      for (let i = 0; i < values.length && (problems?.length ?? 0) < MAX_PROBLEMS; i++) {
        if (typeof values[i] !== 'string') add(`completion.values[${i}] is not a string`);
      }
    }
    if (total !== undefined && !Number.isInteger(total)) add('completion.total is not an integer');
    if (hasMore !== undefined && typeof hasMore !== 'boolean') add('completion.hasMore is not a boolean');
  }
  metaProblem(result, add);
  return problems?.slice(0, MAX_PROBLEMS);
}

function blockProblems(blocks: unknown[], where: string, add: (problem: string) => void): void {
  let found = 0;
  for (let i = 0; i < blocks.length && found < MAX_PROBLEMS; i++) {
    const problem = blockProblem(blocks[i]);
    if (problem !== undefined) {
      found++;
      add(`${where}[${i}] ${problem}`);
    }
  }
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

function metaProblem(result: Item, add: (problem: string) => void): void {
  if (result._meta !== undefined && !isItem(result._meta)) add('_meta is not an object');
}

const isItem = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);
