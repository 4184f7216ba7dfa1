import { CatalogStore } from '@switchboard/catalog';
import type { GatewayConfig, ListLimits, ServerConfig } from '@switchboard/config';
import { silentLogger } from '@switchboard/observability';
import type { UpstreamConnection, UpstreamListener, UpstreamRegistry } from '@switchboard/upstream';
import { CatalogSync } from '../src/catalog-sync.js';

// What the CatalogSync specs share: one upstream whose list reads the test answers.

type Item = Record<string, unknown>;

interface Pending {
  method: string;
  limits: ListLimits;
  resolve(items: Item[]): void;
}

/** One upstream whose list reads stay pending until the test answers them, in any order. */
export function setup(logger = silentLogger()) {
  const pending: Pending[] = [];
  let listener: UpstreamListener = {};
  const connection = {
    name: 'up',
    isAvailable: true,
    capabilities: { tools: {}, prompts: {}, resources: {} },
    listAll: (method: string, _key: string, limits: ListLimits) => new Promise<Item[]>((resolve) => pending.push({ method, limits, resolve })),
    reportTrouble: () => undefined,
  } as unknown as UpstreamConnection;
  const registry = {
    addListener: (l: UpstreamListener) => {
      listener = l;
      return () => undefined;
    },
    get: (name: string) => (name === 'up' ? connection : undefined),
  } as unknown as UpstreamRegistry;
  const store = new CatalogStore();
  const sync = new CatalogSync(registry, store, logger);
  const server = {
    name: 'up',
    transport: 'stdio',
    command: 'x',
    args: [],
    env: {},
    enabled: true,
    lists: { maxItems: 100, maxBytes: 65_536 },
  } as unknown as ServerConfig;
  sync.configure({ namespace: 'prefix', separator: '__', servers: [server] } as unknown as GatewayConfig);

  const answer = (method: string, items: Item[]) => {
    const i = pending.findIndex((p) => p.method === method);
    if (i < 0) throw new Error(`no pending ${method}`);
    pending.splice(i, 1)[0].resolve(items);
  };
  const settle = () => new Promise((r) => setTimeout(r, 0));
  const names = (kind: 'tools' | 'resources' | 'prompts') =>
    store.current.items(kind).map((i) => String(kind === 'resources' ? i.uri : i.name));
  return { pending, answer, settle, names, emit: () => listener, store, sync, server };
}
