import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { medianDifference, medianRatio } from '../measure/aggregate.js';
import { measureWindow, type WindowResult } from '../measure/window.js';
import type { BenchOptions } from '../options.js';
import { errorText, progress, rotate } from '../progress.js';
import { median } from '../stats.js';
import { rememberTree } from '../stray-check.js';
import { startTarget, type StartContext } from '../targets/start-targets.js';
import { waitForTools } from '../targets/tool-names.js';
import type { Target } from '../targets/target.js';
import { echoWindow, recordWindow } from './main-matrix.js';

/** The variants, measured in one daemon: its policy file is rewritten between windows. */
export const POLICY_NONE = 'no-policy';
/** The same file as no-policy, measured as if it were another variant: the noise floor. */
export const POLICY_CONTROL = 'no-policy-control';
export const POLICY_LARGE = 'policy-200';
export const POLICY_RULES = 200;
const CONCURRENCY = 16;
const RELOAD_TIMEOUT_MS = 15_000;

export interface PolicyRow {
  config: string;
  calls: number;
  failures: number;
  callsPerSec: number;
  p50Ms: number;
  cpuUsPerCall: number;
  /** Median of per-round ratios against no-policy. */
  cpuRatio: number;
  p50DeltaMs: number;
}

export interface PolicyResult {
  skipped?: string;
  windows?: WindowResult[];
  rows?: PolicyRow[];
  errors?: string[];
}

/**
 * What a policy costs on the hot path: tools/call echo at C=16 through one switchboard-stdio
 * daemon whose policy file is rewritten between windows (the daemon reloads it), so that
 * every variant runs in the same process. Separate daemons differed by up to 15% by start
 * order alone. The 200 rules are what a real file holds: globs over other tools and
 * servers, argument conditions, denies, spread over roles the caller has; one allows the
 * call. The control is the no-policy file again, measured as a variant of its own.
 */
export async function runPolicyScenario(context: StartContext, options: BenchOptions): Promise<PolicyResult> {
  if (options.skipExtras) return { skipped: 'skipped (--skip-extras)' };
  if (!options.targets.includes('switchboard-stdio')) return { skipped: 'not measured (switchboard-stdio is not among --targets)' };
  const file = join(context.workDir, 'bench-policy.yaml');
  const contents: Record<string, string> = {
    [POLICY_NONE]: NO_POLICY,
    [POLICY_CONTROL]: NO_POLICY,
    [POLICY_LARGE]: benchPolicy(POLICY_RULES),
  };
  writeFileSync(file, NO_POLICY);
  const windows: WindowResult[] = [];
  const errors: string[] = [];
  let target: Target | undefined;
  try {
    target = await startTarget('switchboard-stdio', context, '-policy', { policy: { file } });
    rememberTree(target.servingRoots);
    const [probe] = await target.callers(1);
    let slot = 0;
    for (let round = 1; round <= options.rounds; round++) {
      for (const variant of rotate([POLICY_NONE, POLICY_CONTROL, POLICY_LARGE], slot++)) {
        await recordWindow(`policy round ${round}/${options.rounds} C=${CONCURRENCY} ${variant}`, windows, errors, async () => {
          writeFileSync(file, contents[variant]);
          // The large policy hides bench__payload from lists: that says the reload happened.
          const hidden = variant === POLICY_LARGE;
          await waitForTools(probe, ({ names }) => names.includes(target!.tools.payload) !== hidden, RELOAD_TIMEOUT_MS);
          return { ...(await measureWindow(target!, echoWindow(target!, CONCURRENCY, round, options))), target: variant };
        });
      }
    }
  } catch (error) {
    errors.push(`the policy daemon did not run: ${errorText(error)}`);
  } finally {
    await target?.stop();
  }
  const rows = [POLICY_NONE, POLICY_CONTROL, POLICY_LARGE].map((config): PolicyRow => {
    const mine = windows.filter((w) => w.target === config);
    const med = (pick: (w: WindowResult) => number) => median(mine.map(pick));
    return {
      config,
      calls: mine.reduce((n, w) => n + w.calls, 0),
      failures: mine.reduce((n, w) => n + w.failures, 0),
      callsPerSec: med((w) => w.callsPerSec),
      p50Ms: med((w) => w.p50Ms),
      cpuUsPerCall: med((w) => w.cpuUsPerCall),
      cpuRatio: medianRatio(windows, config, POLICY_NONE, 'echo', CONCURRENCY, 'cpuUsPerCall'),
      p50DeltaMs: medianDifference(windows, config, POLICY_NONE, 'echo', CONCURRENCY, 'p50Ms'),
    };
  });
  progress(`policy: ${rows.map((r) => `${r.config} ${r.cpuUsPerCall.toFixed(0)} µs/call`).join(', ')}`);
  return { windows, rows, errors };
}

/** Everything allowed, no rule: what the daemon does without a policy file on loopback. */
const NO_POLICY = 'defaultEffect: allow\nroles: {}\n';

/**
 * A policy of `count` rules in 10 roles every caller has. The last rule allows the echo
 * call; the first hides bench__payload from lists, which tells the scenario it is in force.
 */
export function benchPolicy(count: number): string {
  const roles = 10;
  const perRole = Math.floor(count / roles);
  const lines = ['defaultEffect: deny', 'roles:'];
  for (let r = 0; r < roles; r++) {
    lines.push(`  team${r}:`);
    for (let i = 0; i < perRole; i++) {
      const n = r * perRole + i;
      if (n === 0) lines.push(`    - { id: hide-payload, deny: list, tool: "bench__payload" }`);
      else if (n === count - 1) lines.push(`    - { id: echo, allow: call, tool: "bench__*" }`);
      else if (n % 4 === 0) lines.push(`    - { id: r${n}, allow: call, tool: "svc${n}__*" }`);
      else if (n % 4 === 1) lines.push(`    - { id: r${n}, deny: call, server: "svc${n}", when: { args.path: { startsWith: "/prod/" } } }`);
      else if (n % 4 === 2) lines.push(`    - { id: r${n}, allow: [call, list], tool: "tool${n}", when: { args.repo: { in: [a, b, c] } } }`);
      else lines.push(`    - { id: r${n}, allow: read, resource: "file:///data${n}/**" }`);
    }
  }
  lines.push(`everyone: [${Array.from({ length: roles }, (_, r) => `team${r}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
}
