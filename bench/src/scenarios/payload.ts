import { toolCall } from '../load/jsonrpc.js';
import { measureWindow, type WindowResult } from '../measure/window.js';
import type { BenchOptions } from '../options.js';
import { rotate } from '../progress.js';
import type { Target, TargetName } from '../targets/target.js';
import { recordWindow, type MatrixResult } from './main-matrix.js';

export const PAYLOAD_KIB = [1, 100, 1024] as const;
export const PAYLOAD_CONCURRENCY = [1, 16] as const;
/** direct-stdio is left out: it shows the transport, not a relay, and the report is wide enough. */
export const PAYLOAD_TARGETS: readonly TargetName[] = ['direct-http', 'switchboard-stdio', 'switchboard-http', 'mcp-proxy'];

export function payloadVariant(kib: number): string {
  return kib >= 1024 ? `${kib / 1024} MiB` : `${kib} KiB`;
}

/**
 * Large results through each relay: the `payload` tool at 1 KiB, 100 KiB and 1 MiB.
 * One round with shorter windows keeps the run inside its time budget; the per-size
 * cost differences are large enough that one round shows them.
 */
export async function runPayloadScenario(targets: readonly Target[], options: BenchOptions): Promise<MatrixResult> {
  const chosen = targets.filter((target) => PAYLOAD_TARGETS.includes(target.name));
  const windows: WindowResult[] = [];
  const errors: string[] = [];
  let slot = 0;
  for (const kib of PAYLOAD_KIB) {
    for (const concurrency of PAYLOAD_CONCURRENCY) {
      for (const target of rotate(chosen, slot++)) {
        const label = `payload ${payloadVariant(kib)} C=${concurrency} ${target.name}`;
        await recordWindow(label, windows, errors, async () => {
          await checkPayloadSize(target, kib);
          return measureWindow(target, {
            variant: payloadVariant(kib),
            request: toolCall(target.tools.payload, { kib }),
            concurrency,
            warmupS: Math.min(0.5, options.warmupS),
            durationS: options.payloadDurationS,
            round: 1,
          });
        });
      }
    }
  }
  return { windows, errors };
}

/** One call outside the window: a relay that truncates or mangles large results must not pass as fast. */
async function checkPayloadSize(target: Target, kib: number): Promise<void> {
  const [caller] = await target.callers(1);
  const outcome = await caller!.call(toolCall(target.tools.payload, { kib }));
  if (!outcome.ok) throw new Error(`payload call failed: ${outcome.error}`);
  const content = outcome.result['content'] as { text?: unknown }[] | undefined;
  const length = typeof content?.[0]?.text === 'string' ? content[0].text.length : -1;
  if (length !== kib * 1024) throw new Error(`payload of ${kib} KiB came back with ${length} characters`);
}
