import type { MethodHandler } from '../relay.types.js';
import { optionalCursor } from './params.js';

type Kind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** A merged list, one page at a time, with the gateway's own cursors. */
const listOf =
  (kind: Kind): MethodHandler =>
  async ({ params }, services) => {
    const page = services.catalog.current.page(kind, optionalCursor(params), services.config().pageSize);
    return page.nextCursor === undefined ? { [kind]: page.items } : { [kind]: page.items, nextCursor: page.nextCursor };
  };

export const listTools = listOf('tools');
export const listPrompts = listOf('prompts');
export const listResources = listOf('resources');
export const listResourceTemplates = listOf('resourceTemplates');
