import { ApiKeyNameTakenError, ApiKeyNotRotatableError, ApiKeyStore, type ApiKeyInfo } from '@switchboard/auth';
import type { GatewayConfig } from '@switchboard/config';
import { ADMIN_ROLE, DurationRefused, durationMs, type DurationSetting } from '@switchboard/core';
import { undefinedRoleReason } from '@switchboard/policy';
import { readPolicyFile } from '../policy-setup.js';
import { COMMON_OPTIONS, commaList, loadCommandConfig, parseCommandArgs, runSubcommand, parseOneArgument, printUsage } from './command-args.js';
import { readingDatabase, writingDatabase, type WriteMode } from './command-database.js';
import { CommandError, usageError } from './command-error.js';
import { formatTable } from './text-table.js';
import { recordAdminAction } from './admin-action.js';
import { keyStatus, nameTakenReason, nothingToRevoke, nothingToRotate, revokedText, time } from './keys-messages.js';

const CREATE_OPTIONS = {
  ...COMMON_OPTIONS,
  name: { type: 'string' },
  roles: { type: 'string' },
  expires: { type: 'string' },
} as const;
const LIST_OPTIONS = { ...COMMON_OPTIONS, json: { type: 'boolean' } } as const;
const ROTATE_OPTIONS = { ...COMMON_OPTIONS, overlap: { type: 'string' } } as const;

/** How long a rotated key serves on beside its replacement without --overlap: time to redeploy the hosts. */
const DEFAULT_OVERLAP_MS = 3_600_000;

/** `switchboard keys create|list|rotate|revoke`: API keys, in the data dir's database (create makes it if need be). */
export async function runKeysCommand(args: string[], usage: string): Promise<number> {
  return runSubcommand('keys', args, usage, { create, list, rotate, revoke });
}

/** What each `keys` subcommand reads of its arguments, without running it; bad usage throws. */
export const KEYS_ARGUMENTS = {
  create(args: string[]) {
    const { values } = parseCommandArgs(args, CREATE_OPTIONS);
    if (values.help) return { values, roles: [], expiresAt: undefined };
    if (!values.name) throw usageError('keys create needs --name NAME');
    const roles = commaList(values.roles);
    const expiresAt = values.expires === undefined ? undefined : Date.now() + expiresInMs(values.expires);
    return { values, roles, expiresAt };
  },
  list: (args: string[]) => parseCommandArgs(args, LIST_OPTIONS),
  rotate(args: string[]) {
    const { values, argument } = parseOneArgument(args, 'key name or id to keys rotate', ROTATE_OPTIONS);
    const overlapMs = values.overlap === undefined ? DEFAULT_OVERLAP_MS : overlapInMs(values.overlap);
    return { values, argument, overlapMs };
  },
  revoke: (args: string[]) => parseOneArgument(args, 'key name or id to keys revoke'),
};

async function create(args: string[], usage: string): Promise<number> {
  const { values, roles, expiresAt } = KEYS_ARGUMENTS.create(args);
  if (values.help) return printUsage(usage);
  const config = loadCommandConfig(values);
  const { key, info } = await withKeys(config, 'create', async (store, record) => {
    try {
      const made = await store.create({ name: values.name!, roles, ...(expiresAt !== undefined && { expiresAt }) });
      record('keys create', { id: made.info.id, name: made.info.name, roles: made.info.roles, expiresAt: made.info.expiresAt });
      return made;
    } catch (err) {
      if (err instanceof ApiKeyNameTakenError) throw new CommandError(nameTakenReason(err), 1);
      throw usageError((err as Error).message);
    }
  });
  warnUndefinedRoles(config, info.roles);
  process.stdout.write(
    `created key '${info.name}' (id ${info.id}; roles: ${info.roles.join(', ') || 'none'}; expires: ${time(info.expiresAt, 'never')})\n` +
      'It is shown only now; store it as a secret. Send it as "Authorization: Bearer <key>" or "X-API-Key: <key>".\n' +
      `${key}\n`,
  );
  return 0;
}

async function list(args: string[], usage: string): Promise<number> {
  const { values } = KEYS_ARGUMENTS.list(args);
  if (values.help) return printUsage(usage);
  const keys = await readingDatabase(loadCommandConfig(values), (dataSource) => new ApiKeyStore(dataSource).list());
  if (values.json) {
    process.stdout.write(`${JSON.stringify(keys.map((k) => ({ ...k, status: keyStatus(k) })), null, 2)}\n`);
    return 0;
  }
  if (keys.length === 0) {
    process.stdout.write('no keys; create one with: switchboard keys create --name NAME [--roles r1,r2] [--expires 30d]\n');
    return 0;
  }
  process.stdout.write(
    formatTable(
      ['ID', 'NAME', 'PREFIX', 'ROLES', 'STATUS', 'CREATED', 'EXPIRES', 'LAST USED'],
      keys.map((k) => [k.id, k.name, `${k.prefix}...`, k.roles.join(',') || '-', statusCell(k), time(k.createdAt), time(k.expiresAt, 'never'), time(k.lastUsedAt, 'never')]),
    ),
  );
  return 0;
}

async function rotate(args: string[], usage: string): Promise<number> {
  const { values, argument, overlapMs } = KEYS_ARGUMENTS.rotate(args);
  if (values.help) return printUsage(usage);
  const byId = /^\d+$/.test(argument);
  const { key, info, replaced, expiredAt } = await withKeys(loadCommandConfig(values), 'change', async (store, record) => {
    const keys = await store.list();
    // By name, the key that stands for it: a rotated one has its replacement already.
    const target = byId ? keys.find((k) => k.id === Number(argument)) : keys.find((k) => k.name === argument && k.revokedAt === null && k.rotatedAt === null);
    if (!target) throw new CommandError(byId ? nothingToRevoke(argument, byId, keys) : nothingToRotate(argument, keys), 1);
    if (target.revokedAt !== null) throw new CommandError(`key '${target.name}' (id ${target.id}) was revoked at ${time(target.revokedAt)}; nothing to rotate`, 1);
    try {
      const rotated = await store.rotate(target.id, overlapMs);
      record('keys rotate', { id: rotated.info.id, name: rotated.info.name, replaced: rotated.replaced.id, replacedUntil: rotated.replaced.expiresAt });
      // Refused before the rotation already, not from it on: the store keeps an expiry that came sooner.
      const lapsed = target.expiresAt !== null && target.expiresAt <= rotated.replaced.rotatedAt!;
      return { ...rotated, expiredAt: lapsed ? target.expiresAt : null };
    } catch (err) {
      // Rotated already, or changed by another command since it was read.
      if (err instanceof ApiKeyNotRotatableError) throw new CommandError(err.message + (target.rotatedAt === null ? '' : '; rotate that one'), 1);
      throw err;
    }
  });
  const old =
    expiredAt !== null
      ? `had already expired at ${time(expiredAt)}`
      : replaced.expiresAt! <= replaced.rotatedAt!
        ? 'is refused as expired from now on'
        : `works until ${time(replaced.expiresAt)}, then is refused as expired`;
  process.stdout.write(
    `rotated key '${info.name}': new key id ${info.id} (roles: ${info.roles.join(', ') || 'none'}; expires: ${time(info.expiresAt, 'never')}); the old key (id ${replaced.id}) ${old}\n` +
      'It is shown only now; store it as a secret. Send it as "Authorization: Bearer <key>" or "X-API-Key: <key>".\n' +
      `${key}\n`,
  );
  return 0;
}

async function revoke(args: string[], usage: string): Promise<number> {
  const { values, argument } = KEYS_ARGUMENTS.revoke(args);
  if (values.help) return printUsage(usage);
  const byId = /^\d+$/.test(argument);
  const { revoked, keys } = await withKeys(loadCommandConfig(values), 'change', async (store, record) => {
    const keys = await store.list();
    // The store revokes by id whatever the key's state: one revoked before is not news.
    if (byId && keys.some((k) => k.id === Number(argument) && k.revokedAt !== null)) return { revoked: [], keys };
    const revoked = await store.revoke(argument);
    if (revoked.length > 0) record('keys revoke', { ids: revoked.map((k) => k.id), name: revoked[0]!.name });
    return { revoked, keys };
  });
  if (revoked.length > 0) {
    process.stdout.write(`${revokedText(revoked)}\n`);
    return 0;
  }
  const earlier = byId ? keys.find((k) => k.id === Number(argument)) : undefined;
  if (earlier) {
    process.stdout.write(`key '${earlier.name}' (id ${earlier.id}) was already revoked at ${time(earlier.revokedAt)}; nothing changed\n`);
    return 0;
  }
  throw new CommandError(nothingToRevoke(argument, byId, keys), 1);
}

/**
 * A role the policy does not define matches no rule, so a misspelt one (`admn`) would only
 * show up later as missing access. A warning, not a refusal: the policy may define it later.
 */
function warnUndefinedRoles(config: GatewayConfig, roles: readonly string[]): void {
  const file = config.policy.file;
  if (!file || roles.length === 0) return;
  const read = readPolicyFile(file);
  if ('problems' in read) {
    process.stderr.write(`warning: the key's roles were not checked against ${file}: it has problems (switchboard policy lint lists them)\n`);
    return;
  }
  // `admin` opens the admin API whether or not the policy has rules for it.
  const defined = [...Object.keys(read.doc.roles), ADMIN_ROLE];
  for (const role of roles) {
    const reason = undefinedRoleReason(role, defined);
    if (reason) process.stderr.write(`warning: ${file}: ${reason}; the key carries it, but no rule applies to it until the policy defines it\n`);
  }
}

/** `record`: the change's audit row (admin-action.ts), written once it is made. */
function withKeys<T>(config: GatewayConfig, mode: WriteMode, use: (store: ApiKeyStore, record: (name: string, facts: Record<string, unknown>) => void) => Promise<T>): Promise<T> {
  return writingDatabase(config, mode, (dataSource) => use(new ApiKeyStore(dataSource), (name, facts) => recordAdminAction(config, dataSource, name, facts)));
}

/** `keys create --expires`: how long the key works; without it, it does not expire (no `off`). */
const EXPIRES: DurationSetting = { name: '--expires', example: '30d', zero: '(leave --expires out for a key that does not expire)' };

/** `keys rotate --overlap`: how long the old key serves on; 0 ends it at once (the grammar refuses 0 elsewhere). */
const OVERLAP: DurationSetting = { name: '--overlap', example: '1h' };

function overlapInMs(text: string): number {
  if (/^0+[smhdw]?$/.test(text)) return 0;
  try {
    return durationMs(text, OVERLAP)!;
  } catch (err) {
    if (err instanceof DurationRefused) throw usageError(`${err.message}, or 0 to end the old key at once`);
    throw err;
  }
}

function expiresInMs(text: string): number {
  try {
    return durationMs(text, EXPIRES)!;
  } catch (err) {
    if (err instanceof DurationRefused) throw usageError(err.message);
    throw err;
  }
}

/** keyStatus for the table: a rotated key names its replacement (EXPIRES says until when). */
function statusCell(key: ApiKeyInfo): string {
  const status = keyStatus(key);
  return status === 'rotated' ? `rotated (by id ${key.replacedBy})` : status;
}
