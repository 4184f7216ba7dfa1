import { describe, expect, it } from 'vitest';
import { policyDocumentSchema } from './policy-document.js';
import { unknownServerSelectors } from './unknown-servers.js';

describe('unknownServerSelectors: a server: that matches no configured upstream', () => {
  const servers = [{ name: 'team' }, { name: 'files', alias: 'fs' }, { name: 'github' }];
  const doc = policyDocumentSchema.parse({
    roles: {
      dev: [
        { id: 'typo', deny: 'call', server: 'teem' },
        { id: 'name', allow: 'call', server: 'team' },
        { id: 'glob', allow: 'call', server: 'git*' },
        { id: 'alias', deny: 'call', server: 'fs' },
        { id: 'nothing-near', allow: 'read', server: 'jira' },
        { id: 'glob-none', allow: 'call', server: 'jira-*' },
        { id: 'no-server', allow: 'call', tool: 'team__x' },
      ],
    },
  });

  it('is found, with its path, and the name it most likely meant; names, globs that match, and aliases (aliasedServerSelectors) are not', () => {
    expect(unknownServerSelectors(doc, servers)).toEqual([
      { path: 'roles.dev.0.server', reason: "server: 'teem' matches no upstream under mcpServers, so the rule never applies (did you mean `team`?)" },
      { path: 'roles.dev.4.server', reason: "server: 'jira' matches no upstream under mcpServers, so the rule never applies" },
      { path: 'roles.dev.5.server', reason: "server: 'jira-*' matches no upstream under mcpServers, so the rule never applies" },
    ]);
  });

  it('a config without servers is nothing to compare with: every server: would be named', () => {
    expect(unknownServerSelectors(doc, [])).toEqual([]);
  });
});
