import { describe, expect, it } from 'vitest';
import { policyDocumentSchema } from './policy-document.js';
import { aliasedServerSelectors } from './server-selectors.js';

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
