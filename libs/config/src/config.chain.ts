import { realpathSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';

/**
 * The config files of the Switchboards this one runs under. Each gives its stdio upstreams
 * the list with its own file added, so a Switchboard started (directly or not) by one that
 * reads the same file finds that file on it. That is a config listing Switchboard as one of
 * its own upstreams, easy to write when the host's file is also Switchboard's; left alone,
 * each Switchboard would start the next one, without end.
 */
export const SERVING_CHAIN_VARIABLE = 'SWITCHBOARD_SERVING_CONFIGS';

type Env = Readonly<Record<string, string | undefined>>;

/** Why `file` may not be served under the chain in `env`, or undefined when it may. */
export function servingLoopProblem(file: string, env: Env): string | undefined {
  const chain = (env[SERVING_CHAIN_VARIABLE] ?? '').split(delimiter).filter((entry) => entry !== '');
  if (!chain.includes(canonicalPath(file))) return undefined;
  return (
    'lists Switchboard itself (switchboard stdio with this file) as an upstream, so each Switchboard would start ' +
    "another; remove that entry: a host's own file lists Switchboard, the file Switchboard reads lists the servers"
  );
}

/** The variable a Switchboard serving `file` gives its stdio upstreams. */
export function servingChainFor(file: string, env: Env = process.env): Record<string, string> {
  const above = env[SERVING_CHAIN_VARIABLE];
  const chain = above ? `${above}${delimiter}${canonicalPath(file)}` : canonicalPath(file);
  return { [SERVING_CHAIN_VARIABLE]: chain };
}

/** Through symlinks, so the same file named two ways is still the same file. */
export function canonicalPath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return resolve(file);
  }
}
