import type { AuditEntry, AuditLog } from '@switchboard/audit';
import { JsonRpcPeer, type JsonRpcMessage } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import type { RelayServices, RequestContext } from '../relay.types.js';
import type { DownstreamSession } from '../session.js';
import { newAuditFacts } from './audit-facts.js';
import { runAudited } from './audited-request.js';

/**
 * Strict mode's audit log, reduced to what runAudited uses, with the write of a row held
 * until the test releases it: the wait a cancel can land in is a process.nextTick (the
 * journal) or a commit, too short to hit from a real host on purpose.
 */
function heldStrictLog() {
  const rows: AuditEntry[] = [];
  let release!: () => void;
  const audit = {
    mode: 'strict',
    assertWritable: () => undefined,
    expectRow: () => undefined,
    record: (entry: AuditEntry) => (rows.push(entry), new Promise<void>((resolve) => (release = resolve))),
  } as unknown as AuditLog;
  return { audit, rows, release: () => release() };
}

const session = { id: 's1', transport: 'streamable-http', principal: { id: 'alice', authMethod: 'api-key' }, protocolVersion: '2025-11-25' } as unknown as DownstreamSession;

describe('runAudited in strict mode', () => {
  it('answers a call whose host cancels it while its row is written: the row already says what the answer is', async () => {
    const { audit, rows, release } = heldStrictLog();
    const sent: JsonRpcMessage[] = [];
    const cancelledOnTheWire: unknown[] = [];
    const peer = new JsonRpcPeer(async (m) => void sent.push(m), {
      onRequest: (request, inbound) => {
        const ctx: RequestContext = { ...inbound, session, request, params: request.params ?? {}, audit: newAuditFacts() };
        const handler = async (c: RequestContext) => ((c.audit.upstream = 'fx'), { content: [{ type: 'text', text: 'done' }] });
        return runAudited(audit, handler, ctx, {} as RelayServices, undefined);
      },
      onNotification: () => undefined,
      onRequestCancelled: (id) => cancelledOnTheWire.push(id),
    });
    peer.handle({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'fx__echo', arguments: {} } });
    await new Promise((r) => setTimeout(r, 0));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ decision: 'allowed', outcome: 'ok' });

    peer.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'too slow' } });
    release();
    await new Promise((r) => setTimeout(r, 0));

    expect(cancelledOnTheWire).toEqual([]);
    expect(sent).toEqual([{ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'done' }] } }]);
  });
});
