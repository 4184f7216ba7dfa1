import { parseArgs, type ParseArgsConfig } from 'node:util';
import { commandLinePath } from '@switchboard/config';

/**
 * The options that name a file or directory, in every command. They are made absolute here,
 * the one place every command's options pass, against the directory the user ran the
 * command in (commandLineDir: under `npm start` that is not the process's own).
 */
const PATH_OPTIONS = ['config', 'data-dir', 'file', 'output'];

/**
 * node:util's parseArgs, strict, except that a string option given twice is an error:
 * parseArgs keeps the last one, and `--since 1h --since 2h` would then quietly mean 2h
 * (the admin API refuses a repeated parameter the same way). Options declared `multiple`
 * may repeat, and so may booleans, where a repeat changes nothing. Throws a TypeError, as
 * parseArgs does for its own refusals. The PATH_OPTIONS come back absolute.
 */
export function parseOptions<T extends ParseArgsConfig & { options: NonNullable<ParseArgsConfig['options']> }>(
  config: T,
): ReturnType<typeof parseArgs<T>> {
  const parsed = parseArgs({ ...config, strict: true, tokens: true });
  // Option name -> how it was first typed: the refusal names what the user wrote (`-n`).
  const seen = new Map<string, string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option') continue;
    const declared = config.options[token.name];
    if (declared?.type !== 'string' || declared.multiple === true) continue;
    const first = seen.get(token.name);
    if (first === token.rawName) throw new TypeError(`Option '${first}' was given more than once`);
    if (first !== undefined) throw new TypeError(`Option '${first}' and '${token.rawName}' name the same option: give it once`);
    seen.set(token.name, token.rawName);
  }
  const values = parsed.values as Record<string, unknown>;
  for (const name of PATH_OPTIONS) {
    const given = values[name];
    // An empty one stays empty: the commands read it as not given.
    if (typeof given === 'string' && given !== '') values[name] = commandLinePath(given);
  }
  return parsed as ReturnType<typeof parseArgs<T>>;
}
