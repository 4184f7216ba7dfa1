import { ApiKeyNameTakenError, ApiKeyNotRotatableError, ApiKeyStore, type ApiKeyInfo } from '@switchboard/auth';
import type { GatewayConfig } from '@switchboard/config';
import { ADMIN_ROLE, DurationRefused, durationMs, foldCallerName, type DurationSetting } from '@switchboard/core';
import { undefinedRoleReason } from '@switchboard/policy';
import { openMigrated } from '../audit-store.js';
import { readPolicyFile } from '../policy-setup.js';
import { COMMON_OPTIONS, commaList, loadCommandConfig, parseCommandArgs, runSubcommand, parseOneArgument, printUsage } from './command-args.js';
import { CommandError, usageError } from './command-error.js';
import { formatTable } from './text-table.js';

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

/** `switchboard keys create|list|rotate|revoke`: API keys, in the data dir's database (created if need be). */
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
  const { key, info } = await withKeys(config, async (store) => {
    try {
      return await store.create({ name: values.name!, roles, ...(expiresAt !== undefined && { expiresAt }) });
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
  const keys = await withKeys(loadCommandConfig(values), (store) => store.list());
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
  const { key, info, replaced, expiredAt } = await withKeys(loadCommandConfig(values), async (store) => {
    const keys = await store.list();
    // By name, the key that stands for it: a rotated one has its replacement already.
    const target = byId ? keys.find((k) => k.id === Number(argument)) : keys.find((k) => k.name === argument && k.revokedAt === null && k.rotatedAt === null);
    if (!target) throw new CommandError(byId ? nothingToRevoke(argument, byId, keys) : nothingToRotate(argument, keys), 1);
    if (target.revokedAt !== null) throw new CommandError(`key '${target.name}' (id ${target.id}) was revoked at ${time(target.revokedAt)}; nothing to rotate`, 1);
    try {
      const rotated = await store.rotate(target.id, overlapMs);
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
  const { revoked, keys } = await withKeys(loadCommandConfig(values), async (store) => {
    const keys = await store.list();
    // The store revokes by id whatever the key's state: one revoked before is not news.
    if (byId && keys.some((k) => k.id === Number(argument) && k.revokedAt !== null)) return { revoked: [], keys };
    return { revoked: await store.revoke(argument), keys };
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
 * What `keys revoke` did to the keys it revoked (newest first): a key still accepted stops
 * working now, but one that had expired, or been rotated out (its overlap over), was refused
 * already, and saying it "stops working" would send the administrator looking for the hosts
 * that were still using it.
 */
function revokedText(revoked: readonly ApiKeyInfo[]): string {
  // Expired when it was revoked, as keyStatus judges: the daemon refused it already.
  const lapsed = (k: ApiKeyInfo) => k.expiresAt !== null && k.expiresAt <= k.revokedAt!;
  const stopped = revoked.filter((k) => !lapsed(k));
  const one = revoked.length === 1;
  const head = one ? `revoked key '${revoked[0].name}' (id ${revoked[0].id})` : `revoked ${revoked.length} keys named '${revoked[0].name}' (ids ${idList(revoked)})`;
  const stop = (subject: string, several: boolean) =>
    `${subject} ${several ? 'stop' : 'stops'} working on the next request, and sessions and switchboard stdio processes using ${several ? 'them' : 'it'} end within 2 s`;
  // A name rotated and still in its overlap: both keys are the principal's.
  if (stopped.length === revoked.length) return `${head}; ${stop(one ? 'it' : 'they', !one)}`;
  const parts: string[] = [];
  if (stopped.length > 0) parts.push(stop(`${stopped.length === 1 ? 'id' : 'ids'} ${idList(stopped)}`, stopped.length > 1));
  for (const k of revoked.filter(lapsed)) {
    const rotatedOut = k.rotatedAt === null ? '' : ` (rotated out by id ${k.replacedBy})`;
    parts.push(`${one ? 'it' : `id ${k.id}`} had already expired at ${time(k.expiresAt)}${rotatedOut}`);
  }
  return `${head}; ${parts.join('; ')}`;
}

const idList = (keys: readonly ApiKeyInfo[]): string => keys.map((k) => k.id).join(', ');

/**
 * Why `keys revoke WORD` (or `keys rotate WORD`) found no key to act on. Digits alone are
 * an id (no name is), any other word a name, matched exactly: a key of that name revoked before, or an active one
 * spelt in another case, is named, so that the administrator knows where they stand.
 */
function nothingToRevoke(word: string, byId: boolean, keys: readonly ApiKeyInfo[]): string {
  if (byId) return `no key with id ${word}`;
  const revoked = keys.filter((k) => k.name === word && k.revokedAt !== null);
  if (revoked.length === 1) return `no active key named '${word}': key id ${revoked[0].id} of that name was revoked at ${time(revoked[0].revokedAt)}`;
  if (revoked.length > 1) {
    return `no active key named '${word}': the keys of that name were revoked (${revoked.map((k) => `id ${k.id} at ${time(k.revokedAt)}`).join(', ')})`;
  }
  const folded = foldCallerName(word);
  const meant = keys.find((k) => k.revokedAt === null && foldCallerName(k.name) === folded);
  return meant ? `no active key named '${word}' (did you mean '${meant.name}'?)` : `no active key named '${word}'`;
}

/**
 * Why `keys create --name` was refused. A name stays taken by its keys until they are revoked,
 * expired ones too (the unique index counts them), so an administrator whose key expired
 * sees the name as free: they are told when it expired and the two ways out, a new key of the
 * same roles (keys rotate, when there is a key to rotate) or revoking the old.
 */
function nameTakenReason(err: ApiKeyNameTakenError): string {
  const keys = err.keys;
  if (keys.some((k) => keyStatus(k) !== 'expired')) return err.message;
  const name = keys[0].name;
  const expired = keys.length === 1 ? `it expired at ${time(keys[0].expiresAt)} (id ${keys[0].id})` : `its keys expired (${keys.map((k) => `id ${k.id} at ${time(k.expiresAt)}`).join(', ')})`;
  // Rotated keys only (their replacement revoked by id): keys rotate NAME refuses, see nothingToRotate.
  const standing = keys.find((k) => k.rotatedAt === null);
  const rotate = standing ? `keys rotate ${name} issues a new key of the same name and roles (${standing.roles.join(', ') || 'none'}), or ` : '';
  return `a key named '${name}' already exists, but ${expired}: ${rotate}keys revoke ${name} frees the name for keys create`;
}

/**
 * Why `keys rotate NAME` found no key to replace. A rotated key whose replacement was revoked
 * by id still serves through its overlap: "no active key" would be wrong, and rotating it
 * again would give the name a third key, so the way out is said instead.
 */
function nothingToRotate(name: string, keys: readonly ApiKeyInfo[]): string {
  const serving = keys.find((k) => k.name === name && keyStatus(k) === 'rotated');
  if (!serving) return nothingToRevoke(name, false, keys);
  return `key '${name}' (id ${serving.id}) was rotated and serves until ${time(serving.expiresAt)}, but its replacement (id ${serving.replacedBy}) was revoked; revoke it, then keys create a new one`;
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

async function withKeys<T>(config: GatewayConfig, use: (store: ApiKeyStore) => Promise<T>): Promise<T> {
  const { dataSource } = await openMigrated(config);
  try {
    return await use(new ApiKeyStore(dataSource));
  } finally {
    await dataSource.destroy();
  }
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

/** As the daemon judges a key now: an active one is accepted, and a rotated one until its overlap ends (its expiry). */
export function keyStatus(key: ApiKeyInfo): 'active' | 'rotated' | 'revoked' | 'expired' {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= Date.now()) return 'expired';
  return key.rotatedAt === null ? 'active' : 'rotated';
}

/** keyStatus for the table: a rotated key names its replacement (EXPIRES says until when). */
function statusCell(key: ApiKeyInfo): string {
  const status = keyStatus(key);
  return status === 'rotated' ? `rotated (by id ${key.replacedBy})` : status;
}

const time = (ms: number | null, none = '-'): string => (ms === null ? none : new Date(ms).toISOString().slice(0, 19) + 'Z');
