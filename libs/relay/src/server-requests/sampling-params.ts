const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The spec's values; the relay sends every one of them to the host as `none` (docs/relay.md). */
const INCLUDE_CONTEXT = ['none', 'thisServer', 'allServers'];

/**
 * What is wrong with a sampling/createMessage request's params, in words; [] when nothing
 * is. Checked before it reaches a host or the inbox: `maxTokens` is what the gateway caps
 * (limits.maxSamplingTokens), and a cap cannot apply to "lots".
 */
export function samplingParamsProblems(params: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const { messages, maxTokens } = params;
  if (!Array.isArray(messages) || messages.length === 0) {
    problems.push('messages must be a non-empty list');
  } else {
    messages.forEach((message, i) => {
      if (!isObject(message) || (message.role !== 'user' && message.role !== 'assistant')) {
        problems.push(`messages[${i}] must have role user or assistant`);
      } else if (!isObject(message.content) && !Array.isArray(message.content)) {
        problems.push(`messages[${i}].content must be a content block or a list of them`);
      }
    });
  }
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) problems.push('maxTokens must be a positive integer');
  if (params.includeContext !== undefined && !INCLUDE_CONTEXT.includes(params.includeContext as string)) {
    problems.push(`includeContext must be one of ${INCLUDE_CONTEXT.join(', ')}`);
  }
  return problems;
}
