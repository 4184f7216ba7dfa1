import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';

/**
 * Node reports a command that cannot be started as `spawn npx.cmd ENOENT`, which says
 * neither where it looked nor why the name may be wrong. Config files copied from another
 * machine (Windows' `npx.cmd`, a path relative to some other directory) are the usual cause,
 * so say where the command was looked for. Other errors are returned unchanged.
 */
export function spawnFailure(
  err: Error,
  command: string,
  cwd: string | undefined,
  platform = process.platform,
  /** Where a server without `cwd` runs: the daemon's own directory, which the config does not show. */
  daemonDir = process.cwd(),
): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== 'ENOENT' && code !== 'EACCES') return err;
  let reason: string;
  if (cwd !== undefined && !existsSync(cwd)) {
    // spawn reports a missing working directory as the command's ENOENT.
    reason = `its working directory ${cwd} does not exist (cwd is relative to the config file)`;
  } else if (code === 'EACCES') {
    reason = 'not executable (permission denied)';
  } else if (isAbsolute(command)) {
    reason = 'not found';
  } else if (/[\\/]/.test(command)) {
    reason =
      cwd !== undefined
        ? `not found relative to ${cwd} (cwd is relative to the config file)`
        : `not found relative to ${daemonDir}, the daemon's working directory (the server has no cwd: set one, relative to the config file, or write an absolute path)`;
  } else {
    reason = 'not found on PATH';
  }
  if (code === 'ENOENT' && platform !== 'win32' && /\.(?:cmd|bat|exe)$/i.test(command)) {
    reason += `; "${command}" is a Windows name: on this system write it without the extension`;
  }
  return Object.assign(new Error(`cannot start command "${command}": ${reason}`), { code });
}
