import { PinStore, type ToolPin } from '@switchboard/policy';
import { sqliteConnection } from '@switchboard/persistence';
import { recordAdminAction } from './admin-action.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, runSubcommand, parseOneArgument, printUsage } from './command-args.js';
import { readingDatabase, writingDatabase } from './command-database.js';
import { CommandError, usageError } from './command-error.js';

/** `switchboard tools review|accept`: tools held back because their definition changed. */
export async function runToolsCommand(args: string[], usage: string): Promise<number> {
  return runSubcommand('tools', args, usage, { review, accept });
}

/** What each `tools` subcommand reads of its arguments, without running it; bad usage throws. */
export const TOOLS_ARGUMENTS = {
  review: (args: string[]) => parseCommandArgs(args, COMMON_OPTIONS),
  accept(args: string[]) {
    const { values, argument: target } = parseOneArgument(args, 'SERVER/TOOL to tools accept (the upstream name and its own tool name)');
    if (values.help) return { values, server: '', tool: '' };
    const slash = target.indexOf('/');
    if (slash <= 0) throw usageError('tools accept needs SERVER/TOOL (the upstream name and its own tool name)');
    return { values, server: target.slice(0, slash), tool: target.slice(slash + 1) };
  },
};

async function review(args: string[], usage: string): Promise<number> {
  const { values } = TOOLS_ARGUMENTS.review(args);
  if (values.help) return printUsage(usage);
  const held = await readingDatabase(loadCommandConfig(values), async (dataSource) => new PinStore(sqliteConnection(dataSource)).quarantined());
  if (held.length === 0) {
    process.stdout.write('no tool is held back: every served definition matches its pin\n');
    return 0;
  }
  for (const pin of held) process.stdout.write(describe(pin));
  process.stdout.write(`Accept a change with: switchboard tools accept SERVER/TOOL\n`);
  return 0;
}

async function accept(args: string[], usage: string): Promise<number> {
  const { values, server, tool } = TOOLS_ARGUMENTS.accept(args);
  if (values.help) return printUsage(usage);
  const accepted = await withPins(values, (pins, record) => {
    const pin = pins.get(server, tool);
    if (!pin?.pendingHash || !pin.pendingDefinition) return undefined;
    pins.accept(server, tool, pin.pendingHash, pin.pendingDefinition);
    record('tools accept', { server, tool, definitionHash: pin.pendingHash });
    return pin;
  });
  if (!accepted) throw new CommandError(`no held-back tool ${server}/${tool}; see switchboard tools review`, 1);
  process.stdout.write(`accepted the new definition of ${server}/${tool}; the daemon serves it again within 2 s\n`);
  return 0;
}

/** Accepting changes a pin the daemon made: there must be a database already. */
function withPins<T>(values: { config?: string; 'data-dir'?: string }, use: (pins: PinStore, record: (name: string, facts: Record<string, unknown>) => void) => T): Promise<T> {
  const config = loadCommandConfig(values);
  return writingDatabase(config, 'change', async (dataSource) => use(new PinStore(sqliteConnection(dataSource)), (name, facts) => recordAdminAction(config, dataSource, name, facts)));
}

/** The fields that changed, pinned value then served value, one line each. */
function describe(pin: ToolPin): string {
  const before = JSON.parse(pin.definition) as Record<string, unknown>;
  const after = JSON.parse(pin.pendingDefinition ?? '{}') as Record<string, unknown>;
  const lines = [`${pin.server}/${pin.tool}: changed ${new Date(pin.changedAt ?? 0).toISOString()} (pinned ${new Date(pin.pinnedAt).toISOString()})`];
  for (const field of ['name', 'description', 'inputSchema', 'annotations']) {
    const was = JSON.stringify(before[field] ?? null);
    const now = JSON.stringify(after[field] ?? null);
    if (was === now) continue;
    lines.push(`  - ${field}: ${was}`, `  + ${field}: ${now}`);
  }
  return `${lines.join('\n')}\n\n`;
}
