import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { canonicalPath } from './config.chain.js';
import { formatPath } from './config.errors.js';
import { isRecord } from './config.expand.js';
import type { RuleProblem } from './config.rules.js';

const WINDOWS_NAME = /\.(?:cmd|bat|exe)$/i;

/**
 * Stdio servers whose command no start can run, said by `config check` and at load rather
 * than found by a server that stays down: a Windows name (`npx.cmd`, from a config copied
 * off Windows) elsewhere, and `switchboard stdio` given this very file, which would list
 * itself again (the child refuses to start: config.chain.ts). A host's own file (Claude
 * Desktop's) read as Switchboard's config is the usual way to meet the second.
 */
export function serverCommandWarnings(raw: unknown, file: string, platform: NodeJS.Platform = process.platform): RuleProblem[] {
  const warnings: RuleProblem[] = [];
  for (const container of ['mcpServers', 'servers']) {
    const servers = isRecord(raw) ? raw[container] : undefined;
    if (!isRecord(servers)) continue;
    for (const [name, server] of Object.entries(servers)) {
      if (!isRecord(server) || typeof server.command !== 'string') continue;
      const args = Array.isArray(server.args) ? server.args.filter((a): a is string => typeof a === 'string') : [];
      if (platform !== 'win32' && WINDOWS_NAME.test(server.command)) {
        const bare = server.command.replace(WINDOWS_NAME, '');
        warnings.push({ path: formatPath([container, name, 'command']), reason: `"${server.command}" is a Windows name: on this system write it without the extension ("${bare}")` });
      }
      if (servesThisFile(server.command, args, file)) {
        warnings.push({
          path: formatPath([container, name]),
          reason:
            'runs switchboard stdio with this very file, which would list itself again: that Switchboard refuses to start, and this server stays down; ' +
            "remove the entry (a host's file lists Switchboard, the file Switchboard reads lists the servers)",
        });
      }
    }
  }
  return warnings;
}

/** `switchboard ... stdio --config FILE` (or `--config=FILE`) with FILE this config, by any name of it. */
function servesThisFile(command: string, args: readonly string[], file: string): boolean {
  if (![command, ...args].some(namesSwitchboard) || !args.includes('stdio')) return false;
  const at = args.findIndex((a) => a === '--config' || a.startsWith('--config='));
  if (at < 0) return false;
  const given = args[at] === '--config' ? args[at + 1] : args[at].slice('--config='.length);
  if (!given) return false;
  // A relative path is the host's working directory's, unknown here; the config's own is the likeliest.
  const path = isAbsolute(given) ? given : resolve(dirname(file), given);
  return canonicalPath(path) === canonicalPath(file);
}

/** `switchboard`, `/opt/switchboard/bin/switchboard.js`, `switchboard@1.2.0`: the program, not a path that merely has the word in it. */
function namesSwitchboard(word: string): boolean {
  return /^switchboard(?:\.[cm]?js|@.*)?$/i.test(basename(word));
}
