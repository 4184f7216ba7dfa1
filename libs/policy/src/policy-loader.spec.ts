import { ConfigError } from '@switchboard/config';
import { describe, expect, it } from 'vitest';
import { loadPolicyBytes } from './policy-loader.js';

/** The problems a policy file is refused with, as `path: reason`. */
function problemsOf(yaml: string): string[] {
  try {
    loadPolicyBytes('policy.yaml', Buffer.from(yaml));
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => `${p.path}: ${p.reason}`);
    throw error;
  }
  return [];
}

describe('a policy file with mistakes', () => {
  it('names what a condition key must be, not zod\'s "Invalid key in record"', () => {
    expect(problemsOf('roles:\n  dev:\n    - { deny: call, tool: y, when: { path: { eq: 1 } } }\n')).toEqual([
      'roles.dev.0.when.path: conditions name an argument: args.<name>',
    ]);
  });
});
