import { ErrorCode, McpError, type JsonRpcPeer } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { HealthProbe } from './health-probe.js';

/** A probe over a peer whose every ping fails with `failure`; what it told the connection. */
function probeFailing(failure: unknown) {
  const told: string[] = [];
  const peer = { request: () => Promise.reject(failure) } as unknown as JsonRpcPeer;
  const probe = new HealthProbe({
    peer: () => peer,
    answered: () => told.push('answered'),
    lost: (reason) => told.push(`lost: ${reason}`),
    trouble: (reason) => told.push(`trouble: ${reason}`),
  });
  return { probe, told };
}

describe('HealthProbe', () => {
  it('a server that cannot be reached is lost at once, and the reason says why (not that it stopped answering pings)', async () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:18301'), { code: 'ECONNREFUSED' }) });
    const { probe, told } = probeFailing(refused);
    await probe.probe();
    expect(told).toEqual(['lost: it could not be reached: fetch failed (connect ECONNREFUSED 127.0.0.1:18301)']);
    const { probe: bare, told: bareTold } = probeFailing(new Error('socket hang up'));
    await bare.probe();
    expect(bareTold).toEqual(['lost: it could not be reached: socket hang up']);
  });

  it('a server that does not answer in time gets a second chance, then is lost for not answering pings', async () => {
    const { probe, told } = probeFailing(new McpError(ErrorCode.RequestTimeout, 'Request timed out'));
    await probe.probe();
    await probe.probe();
    expect(told).toEqual(['trouble: a health check failed', 'lost: it stopped answering pings']);
  });

  it('an error answered is an answer', async () => {
    const { probe, told } = probeFailing(new McpError(ErrorCode.MethodNotFound, 'Method not found'));
    await probe.probe();
    expect(told).toEqual(['answered']);
  });
});
