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

  it('an action the policy does not know is a usage error, not a deny, naming the one most likely meant', () => {
    const known = '--action must be one of list, call, read, subscribe, get, complete, sample, elicit, log';
    expect(usageProblem({ tool: 'fs__read', action: 'calls' })).toBe(`${known} (did you mean call?)`);
    expect(usageProblem({ tool: 'fs__read', action: 'cal' })).toBe(`${known} (did you mean call?)`);
    expect(usageProblem({ tool: 'fs__read', action: 'delete' })).toBe(known);
  });

  it.each(['[1]', '"x"', 'null'])('--args %s is a usage error: arguments are an object', (args) => {
    expect(usageProblem({ tool: 'fs__read', args })).toBe('--args must be a JSON object');
  });

  it('--args that are not JSON at all say so, with where the parser stopped', () => {
    // The parser's own words, which differ between Node versions; each gives the position.
    expect(usageProblem({ tool: 'fs__read', args: '{bad' })).toMatch(/^--args is not valid JSON: .*\bposition 1\b/);
    expect(usageProblem({ tool: 'fs__read', args: '{"a":1' })).toMatch(/^--args is not valid JSON: /);
  });
});
