/** The conformance fixture's prompts and what prompts/get returns for each. */
import { ProtocolError, ProtocolErrorCode, type GetPromptResult, type Prompt } from '@modelcontextprotocol/server';
import { TINY_PNG_BASE64 } from '../fixtures/fixture-content.js';

export const PROMPTS: Prompt[] = [
  { name: 'test_simple_prompt', description: 'A prompt without arguments' },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt that quotes its two arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that embeds the resource named by resourceUri',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  },
  { name: 'test_prompt_with_image', description: 'A prompt with an image' },
];

function requireArgs(prompt: string, args: Record<string, string> | undefined, names: string[]): string[] {
  const missing = names.filter((name) => typeof args?.[name] !== 'string');
  if (missing.length > 0) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${prompt} requires argument(s) ${missing.join(', ')}`);
  }
  return names.map((name) => args![name]!);
}

export function getPrompt(name: string, args: Record<string, string> | undefined): GetPromptResult {
  switch (name) {
    case 'test_simple_prompt':
      return { messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] };
    case 'test_prompt_with_arguments': {
      const [arg1, arg2] = requireArgs(name, args, ['arg1', 'arg2']);
      return {
        messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
      };
    }
    case 'test_prompt_with_embedded_resource': {
      const [resourceUri] = requireArgs(name, args, ['resourceUri']);
      return {
        messages: [
          {
            role: 'user',
            content: {
              type: 'resource',
              resource: { uri: resourceUri!, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
            },
          },
          { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
        ],
      };
    }
    case 'test_prompt_with_image':
      return {
        messages: [
          { role: 'user', content: { type: 'image', data: TINY_PNG_BASE64, mimeType: 'image/png' } },
          { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
        ],
      };
    default:
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${name} not found`);
  }
}
