import type { McpCaller, RpcRequest } from './jsonrpc.js';

export interface LoopResult {
  /** Calls completed, failed ones included. */
  calls: number;
  failures: number;
  /** The first few distinct failure messages, for the report. */
  failureSamples: string[];
  /** Latency of every call, ms (empty when not recording). */
  latenciesMs: Float64Array;
  /** From the first send to the last completion (in-flight calls are drained, not abandoned). */
  elapsedMs: number;
}

const MAX_FAILURE_SAMPLES = 3;

/**
 * Closed loop: each caller is one worker that sends a call, awaits it, records its
 * latency and sends the next, until durationMs has passed. Calls in flight at the
 * deadline are awaited and counted, so the window's CPU delta (taken after this
 * returns) and its call count cover the same work.
 */
export async function runClosedLoop(
  callers: readonly McpCaller[],
  request: RpcRequest,
  durationMs: number,
  record = true,
): Promise<LoopResult> {
  // Preallocated and grown by doubling: pushing to a number[] of boxed doubles would
  // cost the client more than it needs while the measured processes run.
  let latencies = new Float64Array(record ? 16_384 : 0);
  let calls = 0;
  let failures = 0;
  const failureSamples: string[] = [];
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(durationMs * 1e6));

  const worker = async (caller: McpCaller) => {
    while (process.hrtime.bigint() < deadline) {
      const t0 = process.hrtime.bigint();
      const outcome = await caller.call(request);
      const t1 = process.hrtime.bigint();
      if (record) {
        if (calls === latencies.length) {
          const grown = new Float64Array(latencies.length * 2);
          grown.set(latencies);
          latencies = grown;
        }
        latencies[calls] = Number(t1 - t0) / 1e6;
      }
      calls++;
      if (!outcome.ok) {
        failures++;
        if (failureSamples.length < MAX_FAILURE_SAMPLES && !failureSamples.includes(outcome.error)) {
          failureSamples.push(outcome.error);
        }
      }
    }
  };
  await Promise.all(callers.map(worker));
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  return { calls, failures, failureSamples, latenciesMs: latencies.subarray(0, record ? calls : 0), elapsedMs };
}
