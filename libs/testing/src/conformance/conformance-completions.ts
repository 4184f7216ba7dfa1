/** completion/complete for the conformance fixture's prompt arguments and its resource template. */
import { ProtocolError, ProtocolErrorCode, type CompleteResult } from '@modelcontextprotocol/server';
import { PROMPTS } from './conformance-prompts.js';
import { DATA_TEMPLATE, RESOURCES } from './conformance-resources.js';

/** Completion candidates per prompt argument; resource template ids complete from a fixed list. */
const PROMPT_COMPLETIONS: Record<string, Record<string, readonly string[]>> = {
  test_prompt_with_arguments: {
    arg1: ['paris', 'park', 'party', 'test', 'testing', 'tested'],
    arg2: ['alpha', 'beta', 'gamma'],
  },
  test_prompt_with_embedded_resource: {
    resourceUri: RESOURCES.map((resource) => resource.uri),
  },
};
const TEMPLATE_ID_COMPLETIONS = ['1', '2', '3', '123'];

export function complete(ref: { type: string; name?: string; uri?: string }, argument: string, prefix: string): CompleteResult {
  let candidates: readonly string[] | undefined;
  if (ref.type === 'ref/prompt') {
    if (!PROMPTS.some((prompt) => prompt.name === ref.name)) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${ref.name} not found`);
    }
    candidates = PROMPT_COMPLETIONS[ref.name!]?.[argument];
  } else if (ref.type === 'ref/resource') {
    if (ref.uri !== DATA_TEMPLATE) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Resource template ${ref.uri} not found`);
    candidates = argument === 'id' ? TEMPLATE_ID_COMPLETIONS : undefined;
  } else {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown reference type ${ref.type}`);
  }
  const values = (candidates ?? []).filter((value) => value.startsWith(prefix));
  return { completion: { values, total: values.length, hasMore: false } };
}
