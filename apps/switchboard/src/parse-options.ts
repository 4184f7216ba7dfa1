import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestKey, commandLinePath } from '@switchboard/config';
import { emptyValueRefusal, missingValueRefusal } from './option-values.js';

/**
 * The options that name a file or directory, in every command. They are made absolute here,
 * the one place every command's options pass, against the directory the user ran the
 * command in (commandLineDir: under `npm start` that is not the process's own).
 */
const PATH_OPTIONS = ['config', 'data-dir', 'file', 'output'];
// An empty file name (`--file "$POLICY"` with the variable unset) is refused: read as left out,
// `policy check` checked the config's policy instead, `config check` the current directory.

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
  const args = config.args === undefined ? undefined : negativeValuesJoined(config.args, config.options);
  let parsed;
  try {
    parsed = parseArgs({ ...config, args, strict: true, tokens: true });
  } catch (err) {
    throw clearerRefusal(err, args ?? [], config.options);
  }
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
    if (given === '' && name !== 'data-dir') throw new TypeError(emptyValueRefusal(`--${name}`, name));
    // An empty --data-dir stays empty, for the command to refuse with what leaving it out means.
    if (typeof given === 'string' && given !== '') values[name] = commandLinePath(given);
  }
  if (values.checkpoint === '') throw new TypeError(emptyValueRefusal('--checkpoint', 'checkpoint'));
  return parsed as ReturnType<typeof parseArgs<T>>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `-n -1` as `-n-1`, `--lines -1` as `--lines=-1`: parseArgs takes a word that starts with a
 * dash for an option, and refused these with "argument is ambiguous ... use '--lines=-XYZ'".
 * A negative number is no option (none is a digit), so it is the option's value, and the
 * command's own check says what the option takes.
 */
function negativeValuesJoined(args: readonly string[], options: Options): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === '--') return [...joined, ...args.slice(i)];
    const next = args[i + 1];
    if (next !== undefined && /^-\d/.test(next) && takesValue(word, options)) {
      joined.push(word.startsWith('--') ? `${word}=${next}` : `${word}${next}`);
      i++;
    } else joined.push(word);
  }
  return joined;
}

/** Whether `word` is a string option alone: `--lines` or `-n`, not `--lines=5` nor `-fn`. */
function takesValue(word: string, options: Options): boolean {
  if (word.startsWith('--')) return Object.hasOwn(options, word.slice(2)) && options[word.slice(2)].type === 'string';
  if (!/^-[^-]$/.test(word)) return false;
  return Object.values(options).some((option) => option.short === word[1] && option.type === 'string');
}

/**
 * parseArgs' "Option '-n' argument is ambiguous. Did you forget ... use '--lines=-XYZ'" (an
 * option where the value should be: `-n --json`), said in one line; its "Option '-n, --lines
 * <value>' argument missing" (the option last, nothing after it) as what the option takes
 * (option-values.ts); an unknown option with the one most likely meant (and without parseArgs'
 * advice on passing `--confg` as a word, which is not what a typo meant); other refusals as
 * they are.
 */
function clearerRefusal(err: unknown, args: readonly string[], options: Options): unknown {
  const unknown = err instanceof Error ? /^Unknown option '(-[^']*)'/.exec(err.message) : null;
  if (unknown) {
    const [, typed] = unknown;
    const meant = typed.startsWith('--') ? closestKey(typed.slice(2), Object.keys(options)) : undefined;
    return new TypeError(`Unknown option '${typed}'${meant ? ` (did you mean --${meant}?)` : ''}`);
  }
  const missing = err instanceof Error ? /^Option '(?:-(.), )?--([^ ']+) <value>' argument missing$/.exec(err.message) : null;
  if (missing) {
    const [, short, long] = missing;
    // Missing only when the option is the last word: `--lines`, `-n`, or a group `-fn`.
    const last = args.at(-1) ?? '';
    const typed = last.startsWith('--') || short === undefined ? `--${long}` : `-${short}`;
    return new TypeError(missingValueRefusal(typed, long));
  }
  const ambiguous = err instanceof Error ? /^Option '([^']+)' argument is ambiguous\..*use '--([^=']+)=/s.exec(err.message) : null;
  if (!ambiguous) return err;
  const [, given, long] = ambiguous;
  const at = args.indexOf(given);
  const taken = at === -1 || at + 1 >= args.length ? '' : `'${args[at + 1]}' is read as an option; `;
  return new TypeError(`${missingValueRefusal(given, long)} (${taken}a value that starts with '-' is written --${long}=VALUE)`);
}
