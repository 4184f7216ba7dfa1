import { resolve } from 'node:path';

/**
 * What each option that takes a value takes, across every command, with an example value:
 * said when the value is missing (`audit tail --lines`), rather than parseArgs' "Option
 * '-n, --lines <value>' argument missing", which no other refusal of the CLI sounds like.
 * An option of the same name means the same kind of value in every command that has it.
 */
const VALUES: Record<string, [what: string, example: string]> = {
  config: ['a config file', 'switchboard.yaml'],
  'data-dir': ['a directory', './data'],
  port: ['a port number', '8780'],
  host: ['an address to listen on', '127.0.0.1'],
  lines: ['a number of rows', '20'],
  since: ['a date, a time or a duration ago', '24h'],
  until: ['a date, a time or a duration ago', '2026-11-01'],
  principal: ['a principal', 'alice'],
  tool: ['a tool name', 'github__create_issue'],
  decision: ['a decision (allowed, denied, limited, unauthenticated or refused)', 'denied'],
  method: ['an MCP method', 'tools/call'],
  upstream: ['a server name', 'github'],
  server: ['a server name', 'github'],
  session: ['a session id, as the audit log shows it', 'ID'],
  'after-id': ['a row id (the last one you have)', '1234'],
  format: ['an output format (jsonl or csv)', 'jsonl'],
  output: ['a file to write', 'audit.jsonl'],
  checkpoint: ['a file of checkpoint lines, or a daemon log', 'checkpoints.log'],
  arguments: ['the arguments as JSON', `'{"path":"/etc/hosts"}'`],
  args: ['the arguments as JSON', `'{"text":"hi"}'`],
  name: ['a key name', 'alice'],
  roles: ['roles, comma-separated', 'dev,ops'],
  groups: ['groups, comma-separated', 'eng'],
  expires: ['a lifetime', '30d'],
  overlap: ['how long the old key serves on', '1h'],
  file: ['a policy file', 'policy.yaml'],
  action: ['an action', 'call'],
  prompt: ['a prompt name', 'github__summarize'],
  resource: ['a resource URI', 'file:///notes.txt'],
};

/**
 * The refusal of `typed` (`-n`, `--lines`: as the user wrote it) given without a value:
 * "--lines needs a number of rows, e.g. --lines 20". `name` is the option's long name.
 */
export function missingValueRefusal(typed: string, name: string): string {
  const known = Object.hasOwn(VALUES, name) ? VALUES[name] : undefined;
  return known ? `${typed} needs ${known[0]}, e.g. ${typed} ${known[1]}` : `${typed} needs a value`;
}

/** The refusal of `typed` given an empty value: "--file is empty: it needs a policy file, e.g. --file policy.yaml". */
export function emptyValueRefusal(typed: string, name: string): string {
  const known = Object.hasOwn(VALUES, name) ? VALUES[name] : undefined;
  return known ? `${typed} is empty: it needs ${known[0]}, e.g. ${typed} ${known[1]}` : `${typed} is empty`;
}

/**
 * `--data-dir DIR` as the directory it names; undefined when not given (the config's
 * `dataDir` then). An empty value names no directory: read as "not given", a script whose
 * variable was unset ran on the config's data dir instead of the one it meant. `refuse`
 * makes the command's own usage error from the message.
 */
export function dataDirOverride(value: string | undefined, refuse: (message: string) => Error): string | undefined {
  if (value === '') throw refuse("--data-dir is empty: give a directory (e.g. --data-dir ./data), or leave the option out for the config's dataDir");
  return value === undefined ? undefined : resolve(value);
}
