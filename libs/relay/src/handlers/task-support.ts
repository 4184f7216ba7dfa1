import type { Item, RelayServices } from '../relay.types.js';

/**
 * A tools/list page for a host the gateway relays tasks for (ADR 012): each tool with the
 * `execution.taskSupport` the gateway can honour. A tool its upstream may run as a task
 * (`optional`) says so; so does a task-only one (`required` upstream), since the gateway
 * honours both ways of calling it (a plain call runs the task in the gateway, ADR 010); any
 * other is served without `execution` (`forbidden`), and a task-augmented call of it is
 * refused. A new page and new tools: cached pages are shared by every host.
 */
export function withTaskSupport(page: Item, services: RelayServices): Item {
  const tools = page.tools as Item[];
  const catalog = services.catalog.current;
  let changed = false;
  const shown = tools.map((tool) => {
    const route = catalog.resolveTool(tool.name as string);
    const support = route && services.registry.get(route.server)?.tasks.taskSupportOf(route.name);
    if (!support) return tool;
    changed = true;
    return { ...tool, execution: { taskSupport: 'optional' } };
  });
  return changed ? { ...page, tools: shown } : page;
}
