import { formatPath } from '@switchboard/config';
import { API_KEY_METHOD, API_KEY_NAME, API_KEY_NAME_RULE, foldCallerName, parseCallerName } from '@switchboard/core';
import type { PolicyDocument } from './policy-document.js';

/**
 * `users:` entries that name an API key (`alice`, `key:alice`) no key can be named: they
 * match no caller, and their roles go to no one. Most often a token user's name written
 * without its `jwt:` (an address with a `+`, a name with a space or an accent), so with
 * `auth.jwt` configured that is suggested. Judged as matching judges: an entry matches the
 * key whose name folds (foldCallerName) to what it folds to, so `ALICE` is the key `alice`;
 * a key's name folds to its lower case, itself a name a key can have. Names of digits alone
 * are taken: `keys create` refuses them now, but keys made before may have one.
 *
 * `auth` is the config's (undefined: no config to compare with).
 */
export function unmatchableUserEntries(doc: PolicyDocument, auth: { jwt?: unknown } | undefined): { path: string; reason: string }[] {
  const found: { path: string; reason: string }[] = [];
  for (const user of Object.keys(doc.users)) {
    const caller = parseCallerName(user);
    // Other kinds of caller (and what is none, refused by the loader) are not judged here.
    if (caller?.authMethod !== API_KEY_METHOD || API_KEY_NAME.test(foldCallerName(caller.id))) continue;
    const hint =
      auth === undefined ? '; a token user is jwt:NAME (docs/auth.md, Callers by name)' : auth.jwt !== undefined ? ` (did you mean \`jwt:${caller.id}\`?)` : '';
    found.push({
      path: formatPath(['users', user]),
      reason: `names an API key, and no key can have that name (${API_KEY_NAME_RULE}), so the entry never matches a caller${hint}`,
    });
  }
  return found;
}
