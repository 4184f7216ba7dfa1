import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * node:util's parseArgs, strict, except that a string option given twice is an error:
 * parseArgs keeps the last one, and `--since 1h --since 2h` would then quietly mean 2h
 * (the admin API refuses a repeated parameter the same way). Options declared `multiple`
 * may repeat, and so may booleans, where a repeat changes nothing. Throws a TypeError, as
 * parseArgs does for its own refusals.
 */
export function parseOptions<T extends ParseArgsConfig & { options: NonNullable<ParseArgsConfig['options']> }>(
  config: T,
): ReturnType<typeof parseArgs<T>> {
  const parsed = parseArgs({ ...config, strict: true, tokens: true });
  const seen = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option') continue;
    const declared = config.options[token.name];
    if (declared?.type !== 'string' || declared.multiple === true) continue;
    if (seen.has(token.name)) throw new TypeError(`Option '--${token.name}' was given more than once`);
    seen.add(token.name);
  }
  return parsed as ReturnType<typeof parseArgs<T>>;
}
