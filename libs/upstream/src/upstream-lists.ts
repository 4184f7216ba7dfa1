import type { ListLimits } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import { LeftOutItems } from './left-out-items.js';
import { CutLists, type CutList } from './list-cap.js';
import { readList, type ListRead } from './list-reader.js';

type Item = Record<string, unknown>;

/**
 * One upstream's list reads and what they leave behind: each list is read whole (readList),
 * a list cut at a limit is shown in status() until a read is whole again, and what a read
 * cut or left out is logged once rather than at every re-read (a list is read again at each
 * list_changed, and some upstreams send one right after initialized).
 */
export class UpstreamLists {
  private readonly cutLists: CutLists;
  private readonly leftOutItems: LeftOutItems;

  constructor(
    server: string,
    private readonly log: Logger,
  ) {
    this.cutLists = new CutLists(server, log);
    this.leftOutItems = new LeftOutItems(log);
  }

  async read(page: (cursor: string | undefined) => Promise<Item>, method: string, key: string, limits: ListLimits, runsTasks: boolean): Promise<ListRead> {
    const read = await readList(page, method, key, limits, this.log, runsTasks);
    this.cutLists.record(method, read.cut);
    this.leftOutItems.record(method, read.leftOut);
    return read;
  }

  /** The lists whose latest read was cut at a limit. */
  truncated(): CutList[] {
    return this.cutLists.all();
  }
}
