import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { medianDifference, medianRatio } from '../measure/aggregate.js';
import { measureWindow, type WindowResult } from '../measure/window.js';
import type { BenchOptions } from '../options.js';
import { errorText, progress, rotate } from '../progress.js';
import { median } from '../stats.js';
import { rememberTree } from '../stray-check.js';
import { startTarget, type StartContext } from '../targets/start-targets.js';
import type { Target } from '../targets/target.js';
import { echoWindow, recordWindow } from './main-matrix.js';

/** The two daemons: identical but for a policy file of POLICY_RULES rules. */
export const POLICY_NONE = 'no-policy';
/** A second daemon without a policy: its ratio to no-policy is the noise floor of the run. */
export const POLICY_CONTROL = 'no-policy-control';
export const POLICY_LARGE = 'policy-200';
export const POLICY_RULES = 200;
const CONCURRENCY = 16;

export interface PolicyRow {
  config: string;
  calls: number;
  failures: number;
  callsPerSec: number;
  p50Ms: number;
  cpuUsPerCall: number;
  /** Median of per-round ratios against the daemon without a policy. */
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
 * What a policy costs on the hot path: switchboard-stdio with no policy file against the
 * same daemon with a 200-rule policy, tools/call echo at C=16, interleaved rounds. The
 * rules are what a real file holds: globs over other tools and servers, argument
 * conditions, denies, spread over roles the caller has; one of them allows the call.
 */
export async function runPolicyScenario(context: StartContext, options: BenchOptions): Promise<PolicyResult> {
  if (options.skipExtras) return { skipped: 'skipped (--skip-extras)' };
  if (!options.targets.includes('switchboard-stdio')) return { skipped: 'not measured (switchboard-stdio is not among --targets)' };
  const file = join(context.workDir, 'bench-policy.yaml');
  writeFileSync(file, benchPolicy(POLICY_RULES));
  const daemons: { id: string; target: Target }[] = [];
  const windows: WindowResult[] = [];
  const errors: string[] = [];
  try {
    for (const [id, overrides] of [
      [POLICY_NONE, {}],
      [POLICY_CONTROL, {}],
      [POLICY_LARGE, { policy: { file } }],
    ] as const) {
      try {
        const target = await startTarget('switchboard-stdio', context, `-${id}`, overrides);
        rememberTree(target.servingRoots);
        daemons.push({ id, target });
      } catch (error) {
        errors.push(`${id} did not start: ${errorText(error)}`);
      }
    }
    let slot = 0;
    for (let round = 1; round <= options.rounds; round++) {
      for (const daemon of rotate(daemons, slot++)) {
        await recordWindow(`policy round ${round}/${options.rounds} C=${CONCURRENCY} ${daemon.id}`, windows, errors, async () => ({
          ...(await measureWindow(daemon.target, echoWindow(daemon.target, CONCURRENCY, round, options))),
          target: daemon.id,
        }));
      }
    }
  } finally {
    await Promise.allSettled(daemons.map((d) => d.target.stop()));
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

/** A policy of `count` rules in 10 roles every caller has; the last role's last rule allows the echo call. */
export function benchPolicy(count: number): string {
  const roles = 10;
  const perRole = Math.floor(count / roles);
  const lines = ['defaultEffect: deny', 'roles:'];
  for (let r = 0; r < roles; r++) {
    lines.push(`  team${r}:`);
    for (let i = 0; i < perRole; i++) {
      const n = r * perRole + i;
      if (n === count - 1) lines.push(`    - { id: echo, allow: call, tool: "bench__*" }`);
      else if (n % 4 === 0) lines.push(`    - { id: r${n}, allow: call, tool: "svc${n}__*" }`);
      else if (n % 4 === 1) lines.push(`    - { id: r${n}, deny: call, server: "svc${n}", when: { args.path: { startsWith: "/prod/" } } }`);
      else if (n % 4 === 2) lines.push(`    - { id: r${n}, allow: [call, list], tool: "tool${n}", when: { args.repo: { in: [a, b, c] } } }`);
      else lines.push(`    - { id: r${n}, allow: read, resource: "file:///data${n}/**" }`);
    }
  }
  lines.push(`everyone: [${Array.from({ length: roles }, (_, r) => `team${r}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
}
