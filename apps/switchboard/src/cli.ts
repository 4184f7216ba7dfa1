import { ConfigError, BRACKETED_HOST, closestKey, defaultConfigPath, loadConfigWithWarnings, unsafeListenReason, type GatewayConfig } from '@switchboard/config';
import type { CommandFamily } from './commands/index.js';
import type { FileSettings } from './daemon.js';
import { dataDirOverride } from './option-values.js';
import { parseOptions } from './parse-options.js';
import { ShutdownSignals } from './shutdown-signals.js';
import { SWITCHBOARD_VERSION } from './version.js';

export const USAGE = `Usage:
  switchboard start [--config FILE] [--port N] [--host ADDR] [--data-dir DIR]
      Run the gateway daemon (Streamable HTTP at /mcp, HTTP+SSE at /sse).
  switchboard stdio [--config FILE] [--data-dir DIR]
      Serve the same merged endpoint on stdin/stdout.
  switchboard config check [--config FILE]
      Check a config (and its policy file) as start would, without starting anything.
  switchboard db migrate [--config FILE] [--data-dir DIR]
      Create the database or apply pending migrations.
  switchboard db backup --output FILE
      A consistent copy of the database, also while the daemon runs, into a new file outside the
      data dir; says what it holds, and which key files to keep with it.
  switchboard audit tail [-n|--lines N | --after-id ID] [-f|--follow] [--json] [FILTERS]
      The newest N rows (default 20, at most 100000), or every row after row ID, oldest first;
      -f keeps printing new rows.
  switchboard audit export --format jsonl|csv [--output FILE] [FILTERS]
      Every matching row, oldest first, to stdout or FILE; then on stderr how many, and the row
      id the next export resumes after: it gets the rows committed since, none twice or skipped.
  switchboard audit stats [--json] [FILTERS]
      Totals (tool calls, errors, calls their hosts cancelled, denials), and calls, errors and
      denials per tool and per principal; rows per method.
  switchboard audit verify [--checkpoint FILE]
      Check the audit log's hash chain, and that no rewritten view or trigger changes what
      readers see; exit 1 at the first broken row (or such a change). With FILE (checkpoint
      lines, or a daemon log holding them), also that each checkpoint's row is there with its
      hash, or was pruned by retention: rows cut from the end or deleted early exit 1.
  switchboard audit checkpoint
      The checkpoint line of the newest row, to keep outside the database (see audit verify).
  switchboard audit digest --arguments JSON
      The arguments digest the log would hold for a call with these arguments.
  switchboard keys create --name NAME [--roles r1,r2] [--expires 30d]
      Create an API key; it is printed once, on the last line.
  switchboard keys list [--json]
      Every key: name, prefix, roles, status, created, expires, last used.
  switchboard keys rotate NAME|ID [--overlap 1h]
      Replace a key by a new one of the same name and roles, printed once, on the last line; the
      old key serves on for the overlap (default 1h, 0 to end it at once), then is refused as expired.
  switchboard keys revoke NAME|ID
      Revoke a key (by name: every key of the name, a rotated one too); the daemon refuses it
      from its next request.
  switchboard policy check --principal P [--roles r1,r2] [--groups g1] [--file FILE]
                           (--tool T [--args JSON] | --prompt P | --resource URI --server S) [--action A]
                           | --server S --action sample|elicit|log
      The decision (allow, confirm, deny) and the rule that makes it, by the config's policy.file
      or FILE; exit 0 allow or confirm, 3 deny. Without --roles, an API key's principal has the
      roles of its key in the data dir; a token user (jwt:NAME) needs --roles.
  switchboard policy lint [--file FILE]
      Check a policy file (default: the config's policy.file); every problem listed.
  switchboard tools review
      Tools held back because their definition changed since it was pinned, with the change.
  switchboard tools accept SERVER/TOOL
      Accept the new definition; the daemon serves the tool again within 2 s.
  switchboard secrets set --principal P NAME < FILE
      Store an upstream secret for principal P, read from stdin (never argv); encrypted at rest.
  switchboard secrets list [--principal P] [--json]
      Principal, name and last update of each secret; never the values.
  switchboard secrets delete --principal P NAME
      Delete a secret; exit 1 when there is none.
  switchboard --version | --help

The config, db, audit, keys, policy, tools and secrets commands also take --config FILE and --data-dir DIR.
FILTERS: --since WHEN --until WHEN (ISO 8601 date or date-time, epoch ms, or a duration ago: 30m, 24h, 7d)
  --principal P --tool T --decision allowed|denied|limited|unauthenticated|refused
  --method M --upstream U --session ID --after-id ID (rows with a greater id)
Without --config the embedded default (config/default.yaml) is used.`;

const FAMILIES = ['config', 'db', 'audit', 'keys', 'policy', 'tools', 'secrets'];

/**
 * `switchboard -c FILE config check` as `switchboard config check -c FILE`: the options every
 * command family shares may come before the command, as they may for start.
 */
export function commandFirst(argv: string[]): string[] {
  const leading: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const word = argv[i];
    if (word === '-c' || word === '--config' || word === '--data-dir') {
      if (i + 1 >= argv.length) return argv;
      leading.push(word, argv[i + 1]);
      i += 2;
    } else if (word.startsWith('--config=') || word.startsWith('--data-dir=')) {
      leading.push(word);
      i += 1;
    } else break;
  }
  if (leading.length === 0 || !FAMILIES.includes(argv[i])) return argv;
  const [family, subcommand, ...rest] = argv.slice(i);
  // Without a command nothing runs, and the options would stand in its place, where the
  // family would blame them ("'-c' is an option, not a command") for a command left out.
  return subcommand === undefined ? [family] : [family, subcommand, ...leading, ...rest];
}

/** The options of start and stdio (and --help, --version); a bad one throws, as parseArgs does. */
export function parseStartArgs(argv: string[]) {
  return parseOptions({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  });
}

/** Exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad config. */
export async function main(argv: string[]): Promise<number> {
  argv = commandFirst(argv);
  // These families parse their own options; they are named first: `switchboard audit tail -n 5`.
  if (FAMILIES.includes(argv[0])) {
    const { runCommandFamily } = await import('./commands/index.js');
    return runCommandFamily(argv[0] as CommandFamily, argv.slice(1), USAGE);
  }
  let parsed;
  try {
    parsed = parseStartArgs(argv);
  } catch (err) {
    process.stderr.write(`switchboard: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.version) return print(SWITCHBOARD_VERSION);
  const command = positionals[0];
  if (values.help || !command) return print(USAGE, command ? 0 : values.help ? 0 : 2);
  if (command !== 'start' && command !== 'stdio') {
    const meant = closestKey(command, ['start', 'stdio', ...FAMILIES]);
    process.stderr.write(`switchboard: unknown command '${command}'${meant ? ` (did you mean ${meant}?)` : ''}\n\n${USAGE}\n`);
    return 2;
  }

  // From here a signal is caught, not the process killed by it: before the config is read and
  // the daemon's modules load, which is most of start-up (shutdown-signals.ts).
  // SIGHUP: for a daemon run as a service, "read your files again"; from a terminal (its log
  // on it), the terminal closing, so a clean stop; for stdio mode its host gone.
  const signals = new ShutdownSignals(command === 'stdio' || process.stderr.isTTY ? 'stop' : 'reload');
  let config: GatewayConfig;
  let fromFile: FileSettings;
  try {
    const loaded = loadConfigWithWarnings(values.config ?? defaultConfigPath());
    fromFile = { listen: loaded.config.listen, dataDir: loaded.config.dataDir, bytes: loaded.bytes };
    config = applyOverrides(loaded.config, values);
    for (const w of loaded.warnings) process.stderr.write(`warning: ${w.file}: ${w.path}: ${w.reason}\n`);
    // Before anything is opened or migrated: a refused policy is a refused configuration
    // (exit 2), and a service manager must not restart into it.
    if (config.policy.file) {
      const { readPolicyFile } = await import('./policy-setup.js');
      const read = readPolicyFile(config.policy.file);
      if ('problems' in read) throw new UsageError(read.problems);
    }
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UsageError) {
      // As every command reports its refusals (runReporting): one prefix to look for in a log.
      process.stderr.write(`switchboard: ${err.message}\n`);
      return 2;
    }
    throw err;
  }

  if (command === 'stdio') {
    const { runStdio } = await import('./stdio-mode.js');
    if (stoppedBeforeStart(signals)) return 0;
    await runStdio(config, signals);
    return 0;
  }
  const { runDaemon } = await import('./daemon.js');
  if (stoppedBeforeStart(signals)) return 0;
  try {
    await runDaemon(config, fromFile, signals);
  } catch (err) {
    process.stderr.write(`switchboard: ${(err as Error).message}\n`);
    // runDaemon stops what it started; should anything still hold the event loop, a daemon
    // that failed to start must exit anyway, not hang looking alive.
    setTimeout(() => process.exit(1), 2_000).unref();
    return 1;
  }
  return -1; // keeps running; the signal handlers exit
}

class UsageError extends Error {}

/**
 * Whether a signal came while the config was read or the modules loaded: nothing is open yet,
 * nothing to drain, so the command ends here (exit 0) rather than start only to stop.
 */
function stoppedBeforeStart(signals: ShutdownSignals): boolean {
  if (signals.pending === undefined) return false;
  signals.release();
  process.stderr.write(`switchboard: ${signals.pending} before start-up: not started\n`);
  return true;
}

function applyOverrides(config: GatewayConfig, values: { port?: string; host?: string; 'data-dir'?: string }): GatewayConfig {
  const listen = { ...config.listen };
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535, got '${values.port}'`);
    listen.port = port;
  }
  if (values.host !== undefined) {
    if (/^\[.*\]$/.test(values.host)) throw new UsageError(`--host ${values.host}: ${BRACKETED_HOST}`);
    listen.host = values.host;
    const unsafe = unsafeListenReason(listen.host, config.auth.mode);
    if (unsafe) throw new UsageError(`--host ${listen.host}: auth.mode ${unsafe}`);
  }
  return { ...config, listen, dataDir: dataDirOverride(values['data-dir'], (message) => new UsageError(message)) ?? config.dataDir };
}

function print(text: string, code = 0): number {
  (code === 0 ? process.stdout : process.stderr).write(`${text}\n`);
  return code;
}
