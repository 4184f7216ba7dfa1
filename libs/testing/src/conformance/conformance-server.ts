import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  UriTemplate,
  type CallToolResult,
  type CompleteResult,
  type GetPromptResult,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import { TINY_PNG_BASE64, TINY_WAV_BASE64 } from '../fixtures/fixture-content.js';

/**
 * The "everything server" that the official conformance suite
 * (`@modelcontextprotocol/conformance`, server scenarios of the 2025 revisions)
 * drives: the tools, resources, prompts and completions it names, each doing
 * what the scenario's description asks for real (no canned answers keyed on
 * the suite's inputs).
 *
 * One instance per connection (stdio) or per HTTP session. Built on the SDK's
 * low-level Server, as the other fixtures are, so every method's answer is
 * written here and nothing is shaped by McpServer's conveniences.
 *
 * Out of scope for the gateway today, but implemented so the direct run can
 * score them: the server->client requests (sampling, elicitation). They are
 * sent related to the tools/call that caused them, so over Streamable HTTP
 * they ride that call's SSE stream.
 */
export const CONFORMANCE_SERVER_NAME = 'switchboard-conformance-fixture';
export const CONFORMANCE_SERVER_VERSION = '1.0.0';

export const STATIC_TEXT_URI = 'test://static-text';
export const STATIC_BINARY_URI = 'test://static-binary';
export const WATCHED_URI = 'test://watched-resource';
export const DATA_TEMPLATE = 'test://template/{id}/data';
export const JSON_SCHEMA_2020_12_TOOL = 'json_schema_2020_12_tool';

const STATIC_TEXT = 'This is the content of the static text resource.';
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

interface ConformanceTool {
  readonly definition: Tool;
  readonly input: z.ZodType;
  run(args: never, ctx: ServerContext, state: SessionState): Promise<CallToolResult> | CallToolResult;
}

/** What one connection owns: its subscriptions and the watched resource's current text. */
interface SessionState {
  readonly server: Server;
  readonly subscriptions: Set<string>;
  watchedText: string;
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

/** Resolves true after ms, false as soon as the call is cancelled. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

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

const TOOLS: ConformanceTool[] = [
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
      if (!(await pause(50, ctx.mcpReq.signal))) return toolError('cancelled');
      await ctx.mcpReq.log('info', 'Tool processing data', LOGGER);
      if (!(await pause(50, ctx.mcpReq.signal))) return toolError('cancelled');
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
        if (index > 0 && !(await pause(50, ctx.mcpReq.signal))) return toolError('cancelled');
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
      if (!(await pause(100, ctx.mcpReq.signal))) return toolError('cancelled');
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

const RESOURCES: Resource[] = [
  { uri: STATIC_TEXT_URI, name: 'static-text', description: 'A fixed text resource', mimeType: 'text/plain' },
  { uri: STATIC_BINARY_URI, name: 'static-binary', description: 'A fixed binary resource (a 1x1 PNG)', mimeType: 'image/png' },
  {
    uri: WATCHED_URI,
    name: 'watched-resource',
    description: 'A text resource that update_watched_resource changes; subscribe to hear about it',
    mimeType: 'text/plain',
  },
];

const TEMPLATES: ResourceTemplateType[] = [
  {
    uriTemplate: DATA_TEMPLATE,
    name: 'template-data',
    description: 'JSON data for any id',
    mimeType: 'application/json',
  },
];

const PROMPTS: Prompt[] = [
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

/** Completion candidates per prompt argument; resource template ids complete from the ids seen so far. */
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

function requireArgs(prompt: string, args: Record<string, string> | undefined, names: string[]): string[] {
  const missing = names.filter((name) => typeof args?.[name] !== 'string');
  if (missing.length > 0) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${prompt} requires argument(s) ${missing.join(', ')}`);
  }
  return names.map((name) => args![name]!);
}

function getPrompt(name: string, args: Record<string, string> | undefined): GetPromptResult {
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

const dataTemplate = new UriTemplate(DATA_TEMPLATE);

function readResource(uri: string, state: SessionState): ReadResourceResult {
  switch (uri) {
    case STATIC_TEXT_URI:
      return { contents: [{ uri, mimeType: 'text/plain', text: STATIC_TEXT }] };
    case STATIC_BINARY_URI:
      return { contents: [{ uri, mimeType: 'image/png', blob: TINY_PNG_BASE64 }] };
    case WATCHED_URI:
      return { contents: [{ uri, mimeType: 'text/plain', text: state.watchedText }] };
  }
  const id = dataTemplate.match(uri)?.['id'];
  if (typeof id === 'string' && id.length > 0) {
    return {
      contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    };
  }
  throw new ResourceNotFoundError(uri);
}

function complete(ref: { type: string; name?: string; uri?: string }, argument: string, prefix: string): CompleteResult {
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

/** Builds one conformance server instance. */
export function createConformanceServer(): Server {
  const server = new Server(
    { name: CONFORMANCE_SERVER_NAME, version: CONFORMANCE_SERVER_VERSION },
    {
      capabilities: {
        tools: {},
        resources: { subscribe: true },
        prompts: {},
        // The SDK's built-in logging/setLevel handler keeps the level that ctx.mcpReq.log applies.
        logging: {},
        completions: {},
      },
    },
  );
  const state: SessionState = {
    server,
    subscriptions: new Set(),
    watchedText: 'Watched resource content',
  };
  const tools = new Map(TOOLS.map((entry) => [entry.definition.name, entry]));

  server.setRequestHandler('tools/list', () => ({ tools: TOOLS.map((entry) => entry.definition) }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name } = request.params;
    const entry = tools.get(name);
    if (!entry) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
    const args = entry.input.safeParse(request.params.arguments ?? {});
    if (!args.success) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for tool ${name}: ${z.prettifyError(args.error)}`);
    }
    return entry.run(args.data as never, ctx, state);
  });

  server.setRequestHandler('resources/list', () => ({ resources: RESOURCES }));
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: TEMPLATES }));
  server.setRequestHandler('resources/read', (request) => readResource(request.params.uri, state));
  server.setRequestHandler('resources/subscribe', (request) => {
    state.subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', (request) => {
    state.subscriptions.delete(request.params.uri);
    return {};
  });

  server.setRequestHandler('prompts/list', () => ({ prompts: PROMPTS }));
  server.setRequestHandler('prompts/get', (request) => getPrompt(request.params.name, request.params.arguments));

  server.setRequestHandler('completion/complete', (request) =>
    complete(request.params.ref, request.params.argument.name, request.params.argument.value),
  );

  return server;
}
