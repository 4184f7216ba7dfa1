import { ApiKeyStore } from '@switchboard/auth';
import { closestKey, type GatewayConfig } from '@switchboard/config';
import { foldCallerName } from '@switchboard/core';
import { sqliteConnection } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';
import {
  checkPrincipal,
  checkSecretName,
  MAX_SECRET_VALUE_BYTES,
  PrincipalSecretStore,
  SecretError,
  SecretErrorCode,
} from '@switchboard/secrets';
import { loadSecretsKey } from '../digest-key.js';
import { parseOptions } from '../parse-options.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage, runSubcommand } from './command-args.js';
import { readingDatabase, writingDatabase, type WriteMode } from './command-database.js';
import { CommandError, usageError } from './command-error.js';
import { formatTable } from './text-table.js';
import { recordAdminAction } from './admin-action.js';

const TARGET_OPTIONS = { ...COMMON_OPTIONS, principal: { type: 'string' } } as const;
const LIST_OPTIONS = { ...TARGET_OPTIONS, json: { type: 'boolean' } } as const;

type StoreOptions = { config?: string; 'data-dir'?: string };

/** What each `secrets` subcommand reads of its arguments, without running it (nor reading stdin); bad usage throws. */
export const SECRETS_ARGUMENTS = {
  set: (args: string[]) => parseTarget(args, 'set'),
  list: (args: string[]) => parseCommandArgs(args, LIST_OPTIONS),
  delete: (args: string[]) => parseTarget(args, 'delete'),
};

/** `switchboard secrets set|list|delete`: upstream secrets per principal, encrypted in the data dir's database. */
export async function runSecretsCommand(args: string[], usage: string): Promise<number> {
  return runSubcommand('secrets', args, usage, { set, list, delete: remove });
}

/** The value comes from stdin only: argv is visible to every user through `ps`. */
async function set(args: string[], usage: string): Promise<number> {
  const { values, name } = SECRETS_ARGUMENTS.set(args);
  if (values.help) return printUsage(usage);
  const value = await readValue(name);
  const keys = await withSecrets(values, 'create', (store, dataSource, config) => {
    store.set(values.principal, name, value);
    recordAdminAction(config, dataSource, 'secrets set', { principal: values.principal, secret: name });
    return new ApiKeyStore(dataSource).list();
  });
  process.stdout.write(`set secret ${name} for ${values.principal}\n`);
  // A bare name is an API key's (docs/auth.md#callers-by-name); one that names no key is most
  // likely meant for a token or stdio user, whom it will not serve.
  if (!values.principal.includes(':') && !keys.some((k) => k.name === values.principal)) {
    // A key whose name differs only in case (`ALICE` for `alice`): the secret serves no caller.
    const meant = keys.find((k) => foldCallerName(k.name) === foldCallerName(values.principal))?.name ?? closestKey(values.principal, keys.map((k) => k.name));
    process.stderr.write(
      `note: no API key is named '${values.principal}'${meant ? ` (did you mean ${meant}?)` : ''}, and a bare name serves only that key; ` +
        `a token user is jwt:${values.principal}, a switchboard stdio user stdio:${values.principal}` +
        (values.principal === 'anonymous' ? ', and the loopback user (auth.mode: none) loopback:anonymous' : '') +
        '\n',
    );
  }
  return 0;
}

async function list(args: string[], usage: string): Promise<number> {
  const { values } = SECRETS_ARGUMENTS.list(args);
  if (values.help) return printUsage(usage);
  const secrets = await withSecrets(values, 'read', (store) => store.list(values.principal));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(secrets, null, 2)}\n`);
    return 0;
  }
  if (secrets.length === 0) {
    const whose = values.principal === undefined ? '' : ` for principal '${values.principal}'`;
    process.stdout.write(`no secrets${whose}; set one with: switchboard secrets set --principal P NAME < file-with-the-value\n`);
    return 0;
  }
  const time = (ms: number) => new Date(ms).toISOString().slice(0, 19) + 'Z';
  process.stdout.write(formatTable(['PRINCIPAL', 'NAME', 'UPDATED'], secrets.map((s) => [s.principal, s.name, time(s.updatedAt)])));
  return 0;
}

async function remove(args: string[], usage: string): Promise<number> {
  const { values, name } = SECRETS_ARGUMENTS.delete(args);
  if (values.help) return printUsage(usage);
  const deleted = await withSecrets(values, 'change', (store, dataSource, config) => {
    const gone = store.delete(values.principal, name);
    if (gone) recordAdminAction(config, dataSource, 'secrets delete', { principal: values.principal, secret: name });
    return gone;
  });
  if (!deleted) throw new CommandError(`no secret ${name} for principal '${values.principal}'; see switchboard secrets list`, 1);
  process.stdout.write(`deleted secret ${name} for ${values.principal}\n`);
  return 0;
}

/** `--principal P NAME`, the shape of set and delete. */
function parseTarget(args: string[], subcommand: string): { values: StoreOptions & { principal: string; help?: boolean }; name: string } {
  let parsed;
  try {
    parsed = parseOptions({ args, options: TARGET_OPTIONS, allowPositionals: true });
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { values: { ...values, principal: values.principal ?? '' }, name: '' };
  if (values.principal === undefined) throw usageError(`secrets ${subcommand} needs --principal P`);
  if (subcommand === 'set' && positionals.length > 1) throw usageError('secrets set reads the value from standard input, never from the command line (which `ps` shows)');
  if (positionals.length !== 1) throw usageError(`secrets ${subcommand} needs one secret NAME`);
  // Checked before stdin is read: nobody should type a token only to hear the name was wrong.
  // `key:alice` is stored as `alice`: the messages say the name the daemon matches.
  const principal = reportingSecretErrors(() => {
    checkSecretName(positionals[0]);
    return checkPrincipal(values.principal!);
  });
  return { values: { ...values, principal }, name: positionals[0] };
}

/** All of stdin less one trailing newline (what `echo` and editors add); reading stops past the size limit. */
async function readValue(name: string): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write(`value of ${name} (end with Ctrl-D; it is echoed, prefer a pipe or a file):\n`);
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes > MAX_SECRET_VALUE_BYTES + 2) throw usageError(`the value of ${name} on standard input is over ${MAX_SECRET_VALUE_BYTES} bytes`);
  }
  const value = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (value === '') throw usageError(`the value of ${name} is read from standard input, which was empty; e.g. switchboard secrets set --principal P ${name} < file`);
  return value;
}

/** `read`: a read-only connection (readingDatabase); otherwise as writingDatabase does for the mode. */
async function withSecrets<T>(
  values: StoreOptions,
  access: 'read' | WriteMode,
  use: (store: PrincipalSecretStore, dataSource: DataSource, config: GatewayConfig) => T,
): Promise<Awaited<T>> {
  const config = loadCommandConfig(values);
  // The key is loaded (and made, the first time) only to seal or open a value: list and delete need none.
  const run = async (dataSource: DataSource): Promise<Awaited<T>> =>
    // Awaited here: what `use` started must finish before the database closes.
    await reportingSecretErrors(() => use(new PrincipalSecretStore(sqliteConnection(dataSource), () => loadSecretsKey(config.dataDir)), dataSource, config));
  return access === 'read' ? readingDatabase(config, run) : writingDatabase(config, access, run);
}

/** Bad input is a usage error (exit 2); a value that does not decrypt is a runtime failure (exit 1). */
function reportingSecretErrors<T>(run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof SecretError) throw new CommandError(err.message, err.code === SecretErrorCode.Invalid ? 2 : 1);
    throw err;
  }
}
