import type { GatewayConfig } from '@switchboard/config';
import { describe, expect, it } from 'vitest';
import { CommandError } from './command-error.js';
import { policyRequestOf, type PolicyRequestOptions } from './policy-request.js';

const config = { separator: '__', servers: [{ name: 'files', alias: 'fs' }] } as unknown as GatewayConfig;

function usageProblem(values: PolicyRequestOptions): string {
  try {
    policyRequestOf(values, config);
  } catch (err) {
    if (err instanceof CommandError && err.exitCode === 2) return err.message;
    throw err;
  }
  throw new Error('expected a usage error');
}

describe('policy check: the request it decides', () => {
  it('a tool by its public name, its server from the prefix (an alias too), with its arguments', () => {
    expect(policyRequestOf({ tool: 'fs__read', args: '{"path":"/a"}' }, config)).toEqual(['Tool', 'call', { server: 'files', name: 'fs__read', args: { path: '/a' } }]);
    expect(policyRequestOf({ resource: 'file:///a', server: 'files', action: 'subscribe' }, config)).toEqual(['Resource', 'subscribe', { server: 'files', uri: 'file:///a' }]);
  });

  it('a gateway URI for a colliding resource is judged by the URI it wraps, on the upstream its prefix names', () => {
    expect(policyRequestOf({ resource: 'switchboard://fs/demo://readme' }, config)).toEqual(['Resource', 'read', { server: 'files', uri: 'demo://readme' }]);
    expect(policyRequestOf({ resource: 'switchboard://fs/demo://readme', server: 'files' }, config)).toEqual(['Resource', 'read', { server: 'files', uri: 'demo://readme' }]);
  });

  it('sample, elicit and log are decided on the upstream, as the daemon decides them', () => {
    expect(policyRequestOf({ action: 'sample', server: 'files' }, config)).toEqual(['Server', 'sample', { server: 'files' }]);
    expect(usageProblem({ action: 'log', tool: 'fs__read' })).toBe('--action log is decided per upstream: give --server SERVER');
  });

  it('an action the policy does not know is a usage error, not a deny', () => {
    expect(usageProblem({ tool: 'fs__read', action: 'calls' })).toBe('--action must be one of list, call, read, subscribe, get, complete, sample, elicit, log');
  });

  it.each(['[1]', '"x"', 'null', '{bad'])('--args %s is a usage error: arguments are an object', (args) => {
    expect(usageProblem({ tool: 'fs__read', args })).toBe('--args must be a JSON object');
  });
});
