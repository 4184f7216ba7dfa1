import { CatalogStore } from '@switchboard/catalog';
import { PolicyEngine, policyDocumentSchema } from '@switchboard/policy';
import { describe, expect, it } from 'vitest';
import type { RelayServices } from '../relay.types.js';
import { principalListView } from './list-view.js';

const alice = { id: 'alice', authMethod: 'api-key', roles: [], groups: [] };

/** Servers a and b serve tools, c serves nothing, d is a per-principal server alice has no secrets for. */
function services(policy?: PolicyEngine): RelayServices {
  const catalog = new CatalogStore();
  const put = (server: string, names: string[]) =>
    catalog.setSnapshot({ server, prefix: server, namespace: 'prefix', tools: names.map((name) => ({ name, inputSchema: { type: 'object' } })), prompts: [], resources: [], resourceTemplates: [] });
  put('a', ['x', 'y']);
  put('b', ['z']);
  put('c', []);
  put('d', ['w']);
  return { catalog, policy, unusableServers: () => ['d'] } as unknown as RelayServices;
}

function seen(s: RelayServices) {
  const view = principalListView(alice, 'tools', s);
  return {
    listed: s.catalog.current.page('tools', undefined, 10, view.filter).items.map((t) => t.name),
    servers: ['a', 'b', 'c', 'd'].filter((server) => view.listsSomethingOf(server)),
  };
}

describe("a principal's list view", () => {
  it('says a principal may list something of exactly the servers its list shows items of, under a policy', () => {
    const doc = policyDocumentSchema.parse({ roles: { dev: [{ allow: '*', server: 'a' }, { allow: '*', server: 'd' }] }, everyone: ['dev'] });
    expect(seen(services(new PolicyEngine(doc, 'deny')))).toEqual({ listed: ['a__x', 'a__y'], servers: ['a'] });
  });

  it('without a policy, hides only the servers the principal has no credentials for, also from listsSomethingOf', () => {
    expect(seen(services())).toEqual({ listed: ['a__x', 'a__y', 'b__z'], servers: ['a', 'b', 'c'] });
  });
});
