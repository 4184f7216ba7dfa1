import type { DataSource, SelectQueryBuilder } from 'typeorm';
import { AuditRecordEntity } from '../audit-record.entity.js';
import type { AuditFilter, AuditRow } from '../audit.types.js';

export type AuditOrder = 'asc' | 'desc';

export interface AuditPage {
  items: AuditRow[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

export interface ToolStats {
  tool: string;
  upstream: string | null;
  calls: number;
  errors: number;
  denials: number;
}

export interface PrincipalStats {
  principal: string;
  calls: number;
  errors: number;
  denials: number;
}

export interface AuditStats {
  rows: number;
  calls: number;
  errors: number;
  denials: number;
  byTool: ToolStats[];
  byPrincipal: PrincipalStats[];
}

/** Decisions that are refusals, counted as denials by `stats`. */
const REFUSALS = ['denied', 'limited', 'unauthenticated', 'refused'];

/**
 * Reading the log: filtered pages with opaque keyset cursors (stable while rows are
 * appended, no OFFSET scans), an async iterator that walks any number of rows in fixed-size
 * chunks (constant memory, for export and verify), and per-tool / per-principal counts.
 */
export class AuditQuery {
  constructor(private readonly dataSource: DataSource) {}

  async page(filter: AuditFilter, options: { limit: number; cursor?: string; order?: AuditOrder }): Promise<AuditPage> {
    const order = options.order ?? 'desc';
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const keyed: AuditFilter =
      after === undefined ? filter : order === 'asc' ? { ...filter, afterId: max(filter.afterId, after) } : { ...filter, beforeId: min(filter.beforeId, after) };
    const rows = await this.select(keyed)
      .orderBy('r.id', order === 'asc' ? 'ASC' : 'DESC')
      .limit(options.limit + 1)
      .getMany();
    const items = rows.slice(0, options.limit).map(toRow);
    const more = rows.length > options.limit;
    return { items, nextCursor: more ? encodeCursor(items[items.length - 1].id) : undefined };
  }

  /** Every matching row in id order, fetched `chunk` at a time. */
  async *rows(filter: AuditFilter, order: AuditOrder = 'asc', chunk = 1000): AsyncGenerator<AuditRow> {
    let cursor: string | undefined;
    do {
      const page = await this.page(filter, { limit: chunk, cursor, order });
      yield* page.items;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  /** The newest `count` rows, oldest first (for `audit tail`). */
  async last(filter: AuditFilter, count: number): Promise<AuditRow[]> {
    const page = await this.page(filter, { limit: count, order: 'desc' });
    return page.items.reverse();
  }

  async stats(filter: AuditFilter): Promise<AuditStats> {
    const refusal = `CASE WHEN r.decision IN (${REFUSALS.map((d) => `'${d}'`).join(', ')}) THEN 1 ELSE 0 END`;
    const error = `CASE WHEN r.outcome IN ('error', 'tool_error') THEN 1 ELSE 0 END`;
    const totals = await this.select(filter)
      .select('COUNT(*)', 'rows')
      .addSelect(`SUM(CASE WHEN r.method = 'tools/call' THEN 1 ELSE 0 END)`, 'calls')
      .addSelect(`SUM(${error})`, 'errors')
      .addSelect(`SUM(${refusal})`, 'denials')
      .getRawOne<Record<string, number | null>>();
    const byTool = await this.select({ ...filter, method: 'tools/call' })
      .select('r.name', 'tool')
      .addSelect('r.upstream', 'upstream')
      .addSelect('COUNT(*)', 'calls')
      .addSelect(`SUM(${error})`, 'errors')
      .addSelect(`SUM(${refusal})`, 'denials')
      .groupBy('r.name')
      .addGroupBy('r.upstream')
      .orderBy('calls', 'DESC')
      .getRawMany<ToolStats>();
    const byPrincipal = await this.select(filter)
      .select('r.principal', 'principal')
      .addSelect(`SUM(CASE WHEN r.method = 'tools/call' THEN 1 ELSE 0 END)`, 'calls')
      .addSelect(`SUM(${error})`, 'errors')
      .addSelect(`SUM(${refusal})`, 'denials')
      .groupBy('r.principal')
      .orderBy('calls', 'DESC')
      .getRawMany<PrincipalStats>();
    return {
      rows: Number(totals?.rows ?? 0),
      calls: Number(totals?.calls ?? 0),
      errors: Number(totals?.errors ?? 0),
      denials: Number(totals?.denials ?? 0),
      byTool: byTool.map((t) => ({ ...t, calls: Number(t.calls), errors: Number(t.errors), denials: Number(t.denials) })),
      byPrincipal: byPrincipal.map((p) => ({ ...p, calls: Number(p.calls), errors: Number(p.errors), denials: Number(p.denials) })),
    };
  }

  private select(filter: AuditFilter): SelectQueryBuilder<AuditRecordEntity> {
    const q = this.dataSource.getRepository(AuditRecordEntity).createQueryBuilder('r');
    if (filter.since !== undefined) q.andWhere('r.at >= :since', { since: filter.since });
    if (filter.until !== undefined) q.andWhere('r.at < :until', { until: filter.until });
    if (filter.principal !== undefined) q.andWhere('r.principal = :principal', { principal: filter.principal });
    if (filter.tool !== undefined) {
      q.andWhere(`r.method = 'tools/call'`).andWhere('(r.name = :tool OR r.original_name = :tool)', { tool: filter.tool });
    }
    if (filter.decision !== undefined) q.andWhere('r.decision = :decision', { decision: filter.decision });
    if (filter.method !== undefined) q.andWhere('r.method = :method', { method: filter.method });
    if (filter.upstream !== undefined) q.andWhere('r.upstream = :upstream', { upstream: filter.upstream });
    if (filter.sessionId !== undefined) q.andWhere('r.session_id = :sessionId', { sessionId: filter.sessionId });
    if (filter.afterId !== undefined) q.andWhere('r.id > :afterId', { afterId: filter.afterId });
    if (filter.beforeId !== undefined) q.andWhere('r.id < :beforeId', { beforeId: filter.beforeId });
    return q;
  }
}

/** Cursors are opaque to clients; today they carry the last id seen. */
export function encodeCursor(id: number): string {
  return Buffer.from(`id:${id}`).toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString();
  const match = /^id:(\d{1,15})$/.exec(text);
  if (!match) throw new InvalidCursorError();
  return Number(match[1]);
}

export class InvalidCursorError extends Error {
  constructor() {
    super('invalid cursor');
  }
}

function toRow(e: AuditRecordEntity): AuditRow {
  return { ...e, argumentsTruncated: Boolean(e.argumentsTruncated) };
}

const max = (a: number | undefined, b: number) => (a === undefined ? b : Math.max(a, b));
const min = (a: number | undefined, b: number) => (a === undefined ? b : Math.min(a, b));
