import { realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The directory a relative path on the command line (`--config`, `--data-dir`, ...) is taken
 * from: the one the user typed the command in. That is the working directory, except under
 * npm: `npm start -- --config FILE` runs the CLI in the package's root whatever directory
 * npm was run from, and npm passes that directory as INIT_CWD. INIT_CWD counts only while the
 * process still runs where npm put it (its package's directory, npm_package_json's): a script
 * that changes directory first, or a child of a script (a test's daemon), means its own.
 */
export function commandLineDir(env: Env = process.env, cwd: string = process.cwd()): string {
  const packageJson = env.npm_lifecycle_event !== undefined ? env.npm_package_json : undefined;
  if (!packageJson || !env.INIT_CWD) return cwd;
  return canonical(dirname(packageJson)) === canonical(cwd) ? env.INIT_CWD : cwd;
}

/** `path` as given on the command line, made absolute against commandLineDir. */
export function commandLinePath(path: string, env: Env = process.env, cwd: string = process.cwd()): string {
  return resolve(commandLineDir(env, cwd), path);
}

/** Through symlinks: npm may name the package's directory by another path than the kernel's cwd. */
function canonical(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}
