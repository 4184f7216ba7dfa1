import { signed, table } from './markdown.js';
import { POLICY_RULES, type PolicyResult } from './scenarios/policy.js';
import { formatRatio } from './target-checks.js';

/** The policy section of the report: the same daemon with and without a 200-rule policy. */
export function renderPolicy(policy: PolicyResult | undefined): string[] {
  if (!policy) return [];
  const out = ['## Policy on the hot path: switchboard-stdio, tools/call echo, C=16', ''];
  if (policy.skipped) return [...out, `Policy: ${policy.skipped}.`, ''];
  out.push(
    `One daemon whose policy file is rewritten between windows: no rule (everything allowed), or ${POLICY_RULES} rules in 10 roles the caller has (globs, argument conditions, denies; one rule allows the call). ` +
      '“× none” and “p50 vs none” are medians of per-round ratios and differences. ' +
      'no-policy-control is the no-rule file again, measured as a variant of its own: how far it strays from 1.00× is the noise of this run.',
    '',
    table(
      ['policy', 'calls/s', 'p50 ms', 'p50 vs none ms', 'CPU µs/call', 'CPU × none', 'failed'],
      (policy.rows ?? []).map((row) => [
        row.config,
        row.callsPerSec.toFixed(0),
        row.p50Ms.toFixed(2),
        signed(row.p50DeltaMs, 2),
        row.cpuUsPerCall.toFixed(0),
        formatRatio(row.cpuRatio),
        String(row.failures),
      ]),
    ),
    '',
  );
  for (const error of policy.errors ?? []) out.push(`- not measured: ${error}`);
  return out;
}
