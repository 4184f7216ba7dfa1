import { closestKey } from '@switchboard/config';
import type { DataSource } from 'typeorm';
import type { AuditFilter } from '../audit.types.js';
import { principalFilter, principalNames } from './principal-names.js';

/**
 * For a reader that found no rows: each of the filter's principal, tool, method and upstream
 * that no row of the whole log matches, as a note with the value most likely meant, since
 * `--method tools/calls` otherwise reads like "nothing of the kind happened". Each is tried
 * alone (`matchesAlone`: one row is enough to say nothing of it); the values offered are read
 * only for one that matched nothing, a scan of the log each, paid only after finding nothing.
 */
export async function unmatchedFilters(
  dataSource: DataSource,
  filter: AuditFilter,
  matchesAlone: (only: AuditFilter) => Promise<boolean>,
): Promise<string[]> {
  const notes: string[] = [];
  const meant = (value: string, known: (string | null)[]) => {
    const closest = closestKey(value, known.filter((k): k is string => k !== null));
    return closest === undefined ? '' : ` (did you mean ${closest}?)`;
  };
  // One scan of the log per list of values; a tool is known by either of its two names.
  const distinct = async (columns: 'method' | 'upstream' | 'name, original_name', where = '1 = 1') =>
    ((await dataSource.query(`SELECT DISTINCT ${columns} FROM audit_record WHERE ${where}`)) as Record<string, string | null>[]).flatMap((r) => Object.values(r));
  if (filter.principal !== undefined && !(await matchesAlone({ principal: filter.principal }))) {
    const { principal } = principalFilter(filter.principal);
    notes.push(`no row has principal '${filter.principal}'${meant(principal, await principalNames(dataSource))}`);
  }
  if (filter.tool !== undefined && !(await matchesAlone({ tool: filter.tool }))) {
    notes.push(`no tools/call row has tool '${filter.tool}'${meant(filter.tool, await distinct('name, original_name', `method = 'tools/call'`))}`);
  }
  if (filter.method !== undefined && !(await matchesAlone({ method: filter.method }))) {
    notes.push(`no row has method '${filter.method}'${meant(filter.method, await distinct('method'))}`);
  }
  if (filter.upstream !== undefined && !(await matchesAlone({ upstream: filter.upstream }))) {
    notes.push(`no row has upstream '${filter.upstream}'${meant(filter.upstream, await distinct('upstream'))}`);
  }
  return notes;
}
