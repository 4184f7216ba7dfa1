import { describe, expect, it } from 'vitest';
import { policyDocumentSchema } from './policy-document.js';
import { aliasedServerSelectors, unknownServerSelectors } from './server-selectors.js';

describe('aliasedServerSelectors: a server: that names an alias', () => {
  const servers = [{ name: 'files', alias: 'fs' }, { name: 'github' }];
  const doc = policyDocumentSchema.parse({
    roles: {
      dev: [
        { id: 'shared', allow: 'call', tool: 'fs__read_file' },
        { id: 'no-prod', deny: 'call', server: 'fs', when: { 'args.path': { pathWithin: '/srv/prod/' } } },
        { id: 'gh', allow: 'call', server: 'git*' },
        { id: 'files', allow: 'read', server: 'files' },
        { id: 'later', allow: 'call', server: 'jira' },
      ],
    },
  });

  it('is found, with its path and the name to write; names, globs on names and unknown servers are not', () => {
    expect(aliasedServerSelectors(doc, servers)).toEqual([
      {
        path: 'roles.dev.1.server',
        reason: "server: 'fs' matches no upstream's name, only the alias of 'files', so the rule never applies; server: takes the name under mcpServers",
      },
    ]);
  });
});

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
