import { describe, expect, it } from 'vitest';
import type { PolicyDocument } from './policy-document.js';
import { unmatchableToolPatterns, type PublicNaming } from './tool-patterns.js';

const doc = (rules: PolicyDocument['roles'][string]): PolicyDocument => ({ roles: { dev: rules }, users: {}, groups: {}, everyone: [] });
const reasons = (rules: PolicyDocument['roles'][string], naming?: PublicNaming) => unmatchableToolPatterns(doc(rules), naming);

const naming: PublicNaming = {
  separator: '__',
  namespace: 'prefix',
  servers: [{ name: 'team' }, { name: 'files', alias: 'fs' }, { name: 'demo' }],
};

describe('unmatchableToolPatterns: tool: patterns no public tool name can match', () => {
  it('leading or trailing whitespace, without a config too: public names have none', () => {
    expect(reasons([{ allow: 'call', tool: 'team__shell ' }, { deny: 'call', tool: ' fs__*' }, { allow: 'call', tool: 'team__shell' }])).toEqual([
      {
        path: 'roles.dev.0.tool',
        reason: "tool: 'team__shell ' has whitespace, which no public tool name has (the gateway publishes such a character as _), so the rule never applies (did you mean `team__shell`?)",
      },
      {
        path: 'roles.dev.1.tool',
        reason: "tool: ' fs__*' has whitespace, which no public tool name has (the gateway publishes such a character as _), so the rule never applies (did you mean `fs__*`?)",
      },
    ]);
    expect(reasons([{ allow: 'call', tool: 'team__read file' }])[0]!.reason).toBe(
      "tool: 'team__read file' has whitespace, which no public tool name has (the gateway publishes such a character as _), so the rule never applies",
    );
  });

  it("a prefix that contradicts the rule's server:, naming whose prefix it is", () => {
    expect(reasons([{ allow: 'call', tool: 'demo__*', server: 'team' }], naming)).toEqual([
      {
        path: 'roles.dev.0.tool',
        reason:
          "tool: 'demo__*' matches no tool of team, which server: 'team' selects: with namespace: prefix its tools are all team__<name>, so the rule never applies (demo__ is the prefix of demo's tools)",
      },
    ]);
    // The alias is the prefix: fs__* is files', and files__* is no one's.
    expect(reasons([{ allow: 'call', tool: 'fs__*', server: 'files' }], naming)).toEqual([]);
    expect(reasons([{ allow: 'call', tool: 'files__*', server: 'files' }], naming)[0]!.reason).toMatch(/^tool: 'files__\*' matches no tool of files, .* its tools are all fs__<name>, so the rule never applies$/);
  });

  it("the upstream's own name where namespacing is on: suggests the public name", () => {
    expect(reasons([{ allow: 'call', server: 'team', tool: 'read_file' }], naming)).toEqual([
      {
        path: 'roles.dev.0.tool',
        reason:
          "tool: 'read_file' has no namespace separator '__', but with namespace: prefix every tool of team, which server: 'team' selects, is team__<name>, so the rule never applies (did you mean `team__read_file`?)",
      },
    ]);
    expect(reasons([{ allow: 'call', server: 'files', tool: 'read_*' }], naming)[0]!.reason).toMatch(/\(did you mean `fs__read_\*`\?\)$/);
    // Without server:, every upstream's tools are prefixed, so no bare name is published.
    expect(reasons([{ allow: 'call', tool: 'read_file' }], naming)[0]!.reason).toBe(
      "tool: 'read_file' has no namespace separator '__', but with namespace: prefix every tool of team, files and demo is <alias or name>__<name>, so the rule never applies",
    );
  });

  it('a prefix no configured upstream has, naming the one meant', () => {
    expect(reasons([{ deny: 'call', tool: 'teem__shell' }], naming)).toEqual([
      {
        path: 'roles.dev.0.tool',
        reason: "tool: 'teem__shell' matches no tool of a configured upstream: with namespace: prefix each one's tools are <alias or name>__<name>, and none has the prefix teem__, so the rule never applies (did you mean `team__shell`?)",
      },
    ]);
  });

  it('leaves what could match: globs, separators and prefixes as the catalog writes them', () => {
    const could = [
      { allow: 'call', tool: 'team__*' },
      { allow: 'call', tool: '*' },
      { allow: 'call', tool: '*__read_file' },
      { allow: 'call', tool: 't?am__x' },
      { allow: 'call', tool: 'te*' },
      { allow: 'call', tool: '*shell', server: 'team' },
      { allow: 'call', tool: 'fs__*', server: 'f*' },
      { allow: 'call', tool: 'demo__*', server: '*' },
      // server: matching no upstream's name is the server: check's to tell.
      { allow: 'call', tool: 'x__*', server: 'nothing' },
    ] as PolicyDocument['roles'][string];
    expect(reasons(could, naming)).toEqual([]);
    // Another separator: team.x is a public name, team__x is not.
    expect(reasons([{ allow: 'call', tool: 'team.x' }], { ...naming, separator: '.' })).toEqual([]);
    expect(reasons([{ allow: 'call', tool: 'team__x' }], { ...naming, separator: '.' })).toHaveLength(1);
    // A long or odd alias is published sanitized: the rule is judged against that.
    expect(reasons([{ allow: 'call', tool: 'my_tools__x' }], { ...naming, servers: [{ name: 'mine', alias: 'my tools' }] })).toEqual([]);
  });

  it('leaves a server whose tools may be published bare (namespace auto or none) to match any name', () => {
    const bare = [{ allow: 'call', tool: 'read_file', server: 'team' }, { allow: 'call', tool: 'read_file' }, { allow: 'call', tool: 'demo__x', server: 'team' }] as PolicyDocument['roles'][string];
    expect(reasons(bare, { ...naming, namespace: 'auto' })).toEqual([]);
    expect(reasons(bare, { ...naming, servers: [{ name: 'team', namespace: 'none' }, { name: 'demo' }] })).toEqual([]);
    // A server in prefix mode under a global auto is judged.
    expect(reasons([{ allow: 'call', tool: 'read_file', server: 'team' }], { ...naming, namespace: 'auto', servers: [{ name: 'team', namespace: 'prefix' }] })).toHaveLength(1);
  });

  it('without a config only the whitespace is judged, and a config without servers is nothing to compare with', () => {
    expect(reasons([{ allow: 'call', server: 'team', tool: 'read_file' }])).toEqual([]);
    expect(reasons([{ allow: 'call', server: 'team', tool: 'read_file' }], { ...naming, servers: [] })).toEqual([]);
  });
});
