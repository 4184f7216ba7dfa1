/** The conformance fixture's tools: what tools/list advertises and what each call does. */
import type { CallToolResult, ServerContext, Tool } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { TINY_PNG_BASE64, TINY_WAV_BASE64 } from '../fixtures/fixture-content.js';
import { sleep } from '../fixtures/server-support.js';
import { WATCHED_URI } from './conformance-resources.js';
import type { SessionState } from './conformance-state.js';

export const JSON_SCHEMA_2020_12_TOOL = 'json_schema_2020_12_tool';

const LOGGER = 'conformance-fixture';

/** The tools/list entry of json_schema_2020_12_tool: a 2020-12 schema whose keywords a relay must keep. */
const JSON_SCHEMA_2020_12_INPUT = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
  },
  additionalProperties: false,
} as const;

/** The same contract as JSON_SCHEMA_2020_12_INPUT, for validating calls. */
const jsonSchema2020Args = z
  .object({
    name: z.string().optional(),
    address: z.object({ street: z.string().optional(), city: z.string().optional() }).optional(),
  })
  .strict();

export interface ConformanceTool {
  readonly definition: Tool;
  readonly input: z.ZodType;
  run(args: never, ctx: ServerContext, state: SessionState): Promise<CallToolResult> | CallToolResult;
}

function tool<I extends z.ZodObject>(
  name: string,
  description: string,
  input: I,
  run: (args: z.output<I>, ctx: ServerContext, state: SessionState) => Promise<CallToolResult> | CallToolResult,
  inputSchema?: Tool['inputSchema'],
): ConformanceTool {
  return {
    definition: {
      name,
      description,
      inputSchema: inputSchema ?? (z.toJSONSchema(input, { io: 'input' }) as Tool['inputSchema']),
    },
    input,
    run: run as ConformanceTool['run'],
  };
}

const noArgs = z.object({});
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const toolError = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }], isError: true });

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Sends elicitation/create related to the current call; the tool's answer reports what the user did. */
async function elicit(
  ctx: ServerContext,
  state: SessionState,
  message: string,
  requestedSchema: Record<string, unknown>,
): Promise<CallToolResult> {
  if (!state.server.getClientCapabilities()?.elicitation) {
    return toolError('The client did not declare the elicitation capability');
  }
  try {
    const result = await ctx.mcpReq.send({ method: 'elicitation/create', params: { message, requestedSchema } });
    return text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
  } catch (error) {
    return toolError(`Elicitation failed: ${describeError(error)}`);
  }
}

export const TOOLS: ConformanceTool[] = [
  tool('test_simple_text', 'Returns one text block', noArgs, () => text('This is a simple text response for testing.')),
  tool('test_image_content', 'Returns one image block (a 1x1 PNG)', noArgs, () => ({
    content: [{ type: 'image', data: TINY_PNG_BASE64, mimeType: 'image/png' }],
  })),
  tool('test_audio_content', 'Returns one audio block (a short silent WAV)', noArgs, () => ({
    content: [{ type: 'audio', data: TINY_WAV_BASE64, mimeType: 'audio/wav' }],
  })),
  tool('test_embedded_resource', 'Returns one embedded text resource', noArgs, () => ({
    content: [
      {
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      },
    ],
  })),
  tool('test_multiple_content_types', 'Returns a text, an image and an embedded resource block', noArgs, () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: TINY_PNG_BASE64, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ],
  })),
  tool(
    'test_tool_with_logging',
    'Sends three info log messages, 50 ms apart, while it runs',
    noArgs,
    async (_args, ctx) => {
      // ctx.mcpReq.log applies the level the client set with logging/setLevel.
      await ctx.mcpReq.log('info', 'Tool execution started', LOGGER);
      if (!(await sleep(50, ctx.mcpReq.signal))) return toolError('cancelled');
      await ctx.mcpReq.log('info', 'Tool processing data', LOGGER);
      if (!(await sleep(50, ctx.mcpReq.signal))) return toolError('cancelled');
      await ctx.mcpReq.log('info', 'Tool execution completed', LOGGER);
      return text('Tool with logging executed successfully');
    },
  ),
  tool(
    'test_tool_with_progress',
    'Works in three steps 50 ms apart, reporting progress 0, 50 and 100 of 100 when given a progress token',
    noArgs,
    async (_args, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (const [index, progress] of [0, 50, 100].entries()) {
        if (index > 0 && !(await sleep(50, ctx.mcpReq.signal))) return toolError('cancelled');
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100, message: `Completed ${progress} of 100` },
          });
        }
      }
      return text(progressToken === undefined ? 'Done (no progress token given)' : `Done, progress reported to ${String(progressToken)}`);
    },
  ),
  tool('test_error_handling', 'Always fails with a tool execution error (isError)', noArgs, () =>
    toolError('This tool intentionally returns an error for testing'),
  ),
  tool(
    'test_reconnection',
    'Closes the SSE stream of its own call (when the transport can resume streams) and answers afterwards',
    noArgs,
    async (_args, ctx) => {
      // Only a Streamable HTTP transport with an event store offers closeSSE; the
      // answer is then stored and replayed when the client resumes with Last-Event-ID.
      const closeSSE = ctx.http?.closeSSE;
      closeSSE?.();
      if (!(await sleep(100, ctx.mcpReq.signal))) return toolError('cancelled');
      return text(
        closeSSE
          ? 'Reconnection test completed: the stream was closed mid-call and this answer was sent afterwards.'
          : 'Reconnection test completed: this transport has no resumable stream to close.',
      );
    },
  ),
  tool(
    'test_sampling',
    'Asks the client for an LLM completion of prompt (sampling/createMessage) and returns it',
    z.object({ prompt: z.string().describe('The prompt to send to the LLM') }),
    async ({ prompt }, ctx, state) => {
      if (!state.server.getClientCapabilities()?.sampling) {
        return toolError('The client did not declare the sampling capability');
      }
      try {
        const result = await ctx.mcpReq.send({
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
        });
        const blocks = Array.isArray(result.content) ? result.content : [result.content];
        const answer = blocks.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
        return text(`LLM response: ${answer}`);
      } catch (error) {
        return toolError(`Sampling failed: ${describeError(error)}`);
      }
    },
  ),
  tool(
    'test_elicitation',
    'Asks the user (elicitation/create) for a username and an email address',
    z.object({ message: z.string().describe('The message to show the user') }),
    ({ message }, ctx, state) =>
      elicit(ctx, state, message, {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      }),
  ),
  tool(
    'test_elicitation_sep1034_defaults',
    'Elicits a form whose fields of every primitive type carry default values (SEP-1034)',
    noArgs,
    (_args, ctx, state) =>
      elicit(ctx, state, 'Please review and update the form fields with defaults', {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
        required: [],
      }),
  ),
  tool(
    'test_elicitation_sep1330_enums',
    'Elicits a form with the five enum shapes of SEP-1330',
    noArgs,
    (_args, ctx, state) =>
      elicit(ctx, state, 'Please pick from the enum fields', {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            description: 'Titled single-select',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: {
            type: 'string',
            description: 'Legacy titled enum',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            description: 'Untitled multi-select',
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            description: 'Titled multi-select',
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
        required: [],
      }),
  ),
  tool(
    JSON_SCHEMA_2020_12_TOOL,
    'Tool with JSON Schema 2020-12 features ($schema, $defs, additionalProperties); echoes its arguments',
    jsonSchema2020Args,
    (args) => text(JSON.stringify(args)),
    JSON_SCHEMA_2020_12_INPUT as unknown as Tool['inputSchema'],
  ),
  tool(
    'update_watched_resource',
    `Replaces the text of ${WATCHED_URI} and sends notifications/resources/updated if the client subscribed to it`,
    z.object({ text: z.string() }),
    async ({ text: value }, ctx, state) => {
      state.watchedText = value;
      if (!state.subscriptions.has(WATCHED_URI)) return text(`updated ${WATCHED_URI} (not subscribed: no notification)`);
      await ctx.mcpReq.notify({ method: 'notifications/resources/updated', params: { uri: WATCHED_URI } });
      return text(`updated ${WATCHED_URI} and notified the subscriber`);
    },
  ),
];
