import type { Catalog } from '@switchboard/catalog';
import type { Item, RelayServices } from '../relay.types.js';

/**
 * Whether `server` may serve resources: it declared the capability, or is not connected now
 * (nothing is known, so nothing is taken away). One that declared none answers
 * resources/read with -32601: a link it gives is for the host to resolve, not the gateway,
 * and a gateway URI naming it names nothing.
 */
export function servesResources(services: Pick<RelayServices, 'registry'>, server: string): boolean {
  const connection = services.registry.get(server);
  return !connection?.isAvailable || connection.capabilities.resources !== undefined;
}

/**
 * Rewrites upstream resource URIs inside a result to the ones hosts can route back. Almost
 * always nothing changes (URIs are rewritten only on collisions), and then the result object
 * passes through untouched: blocks without URIs cost one type check. `routable` false (the
 * server serves no resources: servesResources) leaves them as the upstream wrote them.
 */
export function publicUrisInContent(catalog: Catalog, server: string, result: Item, routable = true): Item {
  if (!routable) return result;
  return mapArray(result, 'content', (block) => mapBlock(catalog, server, block));
}

export function publicUrisInContents(catalog: Catalog, server: string, result: Item): Item {
  return mapArray(result, 'contents', (c) => withUri(c, catalog, server));
}

export function publicUrisInMessages(catalog: Catalog, server: string, result: Item, routable = true): Item {
  if (!routable) return result;
  return mapArray(result, 'messages', (m) => {
    const content = m.content as Item | undefined;
    if (!content || typeof content !== 'object') return m;
    const mapped = mapBlock(catalog, server, content);
    return mapped === content ? m : { ...m, content: mapped };
  });
}

function mapArray(result: Item, key: string, map: (item: Item) => Item): Item {
  const list = result[key];
  if (!Array.isArray(list)) return result;
  let changed: Item[] | undefined;
  list.forEach((item: Item, i) => {
    const mapped = item && typeof item === 'object' ? map(item) : item;
    if (mapped !== item) (changed ??= [...list])[i] = mapped;
  });
  return changed ? { ...result, [key]: changed } : result;
}

function withUri(item: Item, catalog: Catalog, server: string): Item {
  if (typeof item.uri !== 'string') return item;
  const uri = catalog.toPublicUri(server, item.uri);
  return uri === item.uri ? item : { ...item, uri };
}

function mapBlock(catalog: Catalog, server: string, block: Item): Item {
  if (block.type === 'resource_link') return withUri(block, catalog, server);
  if (block.type === 'resource' && block.resource && typeof block.resource === 'object') {
    const resource = withUri(block.resource as Item, catalog, server);
    return resource === block.resource ? block : { ...block, resource };
  }
  return block;
}
