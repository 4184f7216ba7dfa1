import { z } from 'zod';
import { BYTES_TEXT, ITEMS_TEXT, listBytes, listItems, millis, NAMESPACE_MODES, nonEmpty, text } from './config.schema.fields.js';

/*
 * One upstream server's entry under mcpServers (or servers), the largest section of the
 * config file and the one people copy from other hosts' files; config.schema.ts holds the
 * top level that maps names to these.
 *
 * A server:
 *   type          stdio | http | streamable-http (= http) | sse; inferred from command/url if absent
 *   command       stdio: the program to run                       } ${NAME} and ${env:NAME} are
 *   args          stdio: its arguments                            } expanded in these six from
 *   env           stdio: extra environment variables              } the environment, and
 *   cwd           stdio: working directory, relative to the file  } ${NAME:-default}; $${ is a
 *   url           http/sse: the endpoint, http(s) only            } literal ${
 *   headers       http/sse: sent with every request               }
 *   alias         replaces the server name as the tool prefix, [A-Za-z0-9_-]{1,24}
 *   namespace     overrides the top-level namespace for this server
 *   timeouts      per-server connectMs / requestMs / maxRequestMs, merged over the top-level ones
 *   lists         per-server maxItems / maxBytes, merged over the top-level ones
 *   disabled      true keeps the entry without starting it
 *   isolation     shared (one connection for everyone) | per-session (one per downstream
 *                 session) | per-principal (one per user; env and headers may then use
 *                 ${secret:NAME}, the caller's own secret)
 *   roots         [{ uri: file://..., name? }]: the gateway answers the server's roots/list
 *                 with these itself, never asking a host
 */

const SERVER_TYPES = ['stdio', 'http', 'streamable-http', 'sse'] as const;

export const SERVER_NAME_MAX = 64;
const ALIAS_PATTERN = /^[A-Za-z0-9_-]{1,24}$/;

/**
 * An env value. VS Code writes null to take a variable out of the inherited environment; a
 * stdio upstream inherits only a few (HOME, PATH, ...) here, so the entry can simply go.
 */
const envValue = () =>
  z.string({
    error: (issue) =>
      issue.input === null
        ? 'must be a string; to keep a variable from the server, leave it out (a stdio server inherits only a few variables: HOME, PATH, ...)'
        : 'must be a string (quote numbers and booleans)',
  });

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol, hostname } = new URL(value);
  return (protocol === 'http:' || protocol === 'https:') && hostname !== '';
}

/** The spec's roots are file:// URIs only. */
function isFileUri(value: string): boolean {
  return value.startsWith('file://') && URL.canParse(value);
}

const serverLists = z
  .strictObject({
    maxItems: listItems().optional().describe(ITEMS_TEXT),
    maxBytes: listBytes().optional().describe(BYTES_TEXT),
  })
  .describe('Overrides of the top-level lists limits for this server.');

const serverTimeouts = z
  .strictObject({
    connectMs: millis().optional(),
    requestMs: millis().optional(),
    maxRequestMs: millis().optional(),
  })
  .describe('Overrides of the top-level timeouts for this server (milliseconds).');

const pinnedRoot = z
  .strictObject({
    uri: z
      .string()
      .refine(isFileUri, { error: 'must be a file:// URI (roots are file URIs)' })
      .describe('The root, a file:// URI.'),
    name: text().optional().describe('A name for it that hosts and servers may show.'),
  })
  .describe('A root given to the server as it is.');

export const serverSchema = z
  .strictObject({
    type: z
      .enum(SERVER_TYPES)
      .optional()
      .describe('Transport. Absent: `command` means stdio, `url` means http. streamable-http is a synonym of http.'),
    command: nonEmpty().optional().describe('stdio: the program to run. ${NAME} and ${env:NAME} are expanded.'),
    args: z.array(text()).optional().describe('stdio: its arguments (expanded like command).'),
    env: z.record(z.string(), envValue()).optional().describe('stdio: extra environment variables (values expanded).'),
    cwd: nonEmpty().optional().describe("stdio: working directory, relative to the config file's directory."),
    url: z
      .string()
      .refine(isHttpUrl, { error: 'must be an http(s) URL' })
      .optional()
      .describe('http/sse: the endpoint URL (expanded).'),
    headers: z.record(z.string(), text()).optional().describe('http/sse: headers sent with every request (values expanded).'),
    alias: z
      .string()
      .regex(ALIAS_PATTERN, { error: 'must be 1 to 24 of A-Z a-z 0-9 _ -' })
      .optional()
      .describe('Prefix used instead of the server name for its tools and prompts.'),
    namespace: z.enum(NAMESPACE_MODES).optional().describe('Overrides the top-level namespace mode.'),
    timeouts: serverTimeouts.optional(),
    lists: serverLists.optional(),
    disabled: z.boolean().optional().describe('true keeps the entry without starting the server.'),
    isolation: z
      .enum(['shared', 'per-session', 'per-principal'])
      .optional()
      .describe(
        'shared (default): one connection serves everyone. per-session: one connection per downstream session, for stateful servers. per-principal: one connection per principal, so per-user credentials (${secret:NAME} in env or headers) never mix.',
      ),
    roots: z
      .array(pinnedRoot)
      .optional()
      .describe("The server's roots, answered by the gateway itself (hosts are never asked, nor told of their roots' changes)."),
    pin: z
      .enum(['strict', 'warn', 'off'])
      .optional()
      .describe('Tool-definition pinning: strict (default) holds back a changed tool until accepted; warn reports it; off.'),
  })
  .meta({ id: 'SwitchboardServer', description: 'One upstream MCP server.' });

export const serverMap = () => z.record(z.string(), serverSchema);

export type ServerInput = z.output<typeof serverSchema>;
