import { API_KEY_METHOD, foldCallerName, parseCallerName } from '@switchboard/core';
import type { DataSource } from 'typeorm';

/**
 * Methods that rows carry but no caller signs in with, so they are no caller names elsewhere
 * (secrets, the policy's users:): `none` for a request refused before anyone was identified
 * and an upstream's own, `internal` for Switchboard's own rows. `audit tail` prints such rows
 * as `none:anonymous` and `internal:switchboard`, and that must find them again.
 */
const ROW_ONLY_METHODS = new Set(['none', 'internal']);

/**
 * A `principal` filter: a caller name with its kind (`jwt:alice`, `key:alice`, `stdio:bob`,
 * `loopback:anonymous`, `none:anonymous`) matches that caller only; a bare name matches the
 * rows of that name however the caller authenticated (a search, not an identity: the rows
 * show the method). The kind may also be written as rows name the method: `api-key:alice`.
 */
export function principalFilter(text: string): { principal: string; authMethod?: string } {
  if (text.startsWith(`${API_KEY_METHOD}:`)) text = `key:${text.slice(API_KEY_METHOD.length + 1)}`;
  // parseCallerName reads a bare name as a key's; here only a written kind narrows.
  const caller = text.includes(':') ? parseCallerName(text) : undefined;
  if (caller) return { principal: caller.id, authMethod: caller.authMethod };
  const colon = text.indexOf(':');
  const method = text.slice(0, colon);
  if (colon > 0 && colon < text.length - 1 && ROW_ONLY_METHODS.has(method)) return { principal: text.slice(colon + 1), authMethod: method };
  return { principal: text };
}

/** A `principal` filter as the log spells it: every stored name it matches, and the method when one was written. */
export interface PrincipalMatch {
  spellings: string[];
  authMethod?: string;
}

/**
 * The principals in the log that `text` names as the policy and the rate limits match names
 * (foldCallerName: `Frank` and `frank`, a composed and a decomposed é): rows keep a name as
 * it arrived, and "what did frank do" must find them all.
 */
export async function principalMatch(dataSource: DataSource, text: string): Promise<PrincipalMatch> {
  const { principal, authMethod } = principalFilter(text);
  const folded = foldCallerName(principal);
  const spellings = (await principalNames(dataSource)).filter((name) => name === principal || foldCallerName(name) === folded);
  return authMethod === undefined ? { spellings } : { spellings, authMethod };
}

/**
 * Every principal in the log, read from the principal index by a recursive skip-scan: one
 * seek per name, not one read per row.
 */
export async function principalNames(dataSource: DataSource): Promise<string[]> {
  const names = (await dataSource.query(
    `WITH RECURSIVE p(name) AS (
       SELECT MIN(principal) FROM audit_entry
       UNION ALL
       SELECT (SELECT MIN(principal) FROM audit_entry WHERE principal > p.name) FROM p WHERE p.name IS NOT NULL
     )
     SELECT name FROM p WHERE name IS NOT NULL`,
  )) as { name: string }[];
  return names.map((n) => n.name);
}
