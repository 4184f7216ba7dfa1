/*
 * A duration as people write it in the config and on the command line: a count of 1 to 6
 * digits and a unit, s m h d w (`30s`, `90d`, `2w`), or `off` where the setting has it.
 * Zero is refused everywhere: "never" is `off`, or leaving the setting out. One grammar for
 * audit.retention, audit.checkpointEvery and `keys create --expires`; each setting brings
 * what `off` means for it, if anything, and its shortest and longest (DurationSetting).
 */

/** Milliseconds in one of each unit. */
export const DURATION_UNITS_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
type DurationUnit = keyof typeof DURATION_UNITS_MS;

/** One setting that takes a duration: what its messages say, and its bounds. */
export interface DurationSetting {
  /** As it is written where it is set: 'audit.retention', '--expires'. Starts a thrown message. */
  readonly name: string;
  /** A usual value, for the message on a value of the wrong form: '90d'. */
  readonly example: string;
  /** What `off` means for this setting ('keeps every row'), said when zero is refused; absent: `off` is refused. */
  readonly off?: string;
  /** Why zero is refused, said after "must be more than 0": '(pruning would ...)'. */
  readonly zero?: string;
  /**
   * The shortest it takes, written as a duration, and why, said after "must be at least":
   * { at: '1h', why: '(pruning would ...)' }. Above zero: zero has its own message.
   */
  readonly min?: { readonly at: string; readonly why: string };
  /** The longest it takes, written as a duration: '7d'. */
  readonly max?: string;
}

const UNITS = Object.keys(DURATION_UNITS_MS).join('');
const FORM = new RegExp(`^(\\d{1,6})([${UNITS}])$`);
/** The form with a count too long for it. */
const LONG_COUNT = new RegExp(`^\\d{7,}([${UNITS}])$`);
/** A count and a unit, zero left out. */
const NONZERO_FORM = `(?!0+[${UNITS}]$)\\d{1,6}[${UNITS}]`;
/** The form with zero left out, and `off`: the pattern for editors (the JSON schema) and the config. */
const WITH_OFF = new RegExp(`^(?:off|${NONZERO_FORM})$`);
const WITHOUT_OFF = new RegExp(`^${NONZERO_FORM}$`);

/** A count and a unit in milliseconds; undefined for anything else. */
function msOf(text: string): number | undefined {
  const match = FORM.exec(text);
  return match ? Number(match[1]) * DURATION_UNITS_MS[match[2] as DurationUnit] : undefined;
}

/**
 * What `setting` takes, its shortest and longest aside: a nonzero count and a unit, and `off` if it has
 * one. A value it refuses gets its reason from durationProblem.
 */
export function durationPattern(setting: DurationSetting): RegExp {
  return setting.off === undefined ? WITHOUT_OFF : WITH_OFF;
}

type Reading = { ms: number | undefined } | { problem: string };

function read(text: string, setting: DurationSetting): Reading {
  if (text === 'off' && setting.off !== undefined) return { ms: undefined };
  const ms = msOf(text);
  const long = LONG_COUNT.exec(text);
  if (ms === undefined && long) {
    // The form is right, the count too long: say that, and where a larger unit helps, which.
    const larger = Object.keys(DURATION_UNITS_MS).filter((u) => DURATION_UNITS_MS[u as DurationUnit] > DURATION_UNITS_MS[long[1] as DurationUnit]);
    return { problem: `has a count of more than 6 digits${larger.length > 0 ? `; write it in a larger unit (${larger.join(', ')})` : ''}` };
  }
  if (ms === undefined) {
    const units = Object.keys(DURATION_UNITS_MS).join(', ');
    return { problem: `must be a count and a unit (${units}) like '${setting.example}'${setting.off === undefined ? '' : ", or 'off'"}` };
  }
  if (ms === 0) {
    return { problem: `must be more than 0${setting.zero ? ` ${setting.zero}` : ''}${setting.off === undefined ? '' : `; 'off' ${setting.off}`}` };
  }
  const { min, max } = setting;
  if (min !== undefined && ms < boundMs(setting, min.at)) return { problem: `must be at least ${min.at} ${min.why}` };
  if (max !== undefined && ms > boundMs(setting, max)) return { problem: `must be at most ${max}` };
  return { ms };
}

/** A setting's own bound, written as a duration, in milliseconds. */
function boundMs(setting: DurationSetting, bound: string): number {
  const ms = msOf(bound);
  if (ms === undefined) throw new Error(`${setting.name}: its bound '${bound}' is not a duration`);
  return ms;
}

/**
 * Why `setting` refuses `text` ("must be ..."; the config puts it after the setting's path),
 * or undefined when it takes it.
 */
export function durationProblem(text: string, setting: DurationSetting): string | undefined {
  const reading = read(text, setting);
  return 'problem' in reading ? reading.problem : undefined;
}

/** A duration a setting refuses; the message names the setting, the value and what it takes. */
export class DurationRefused extends Error {
  constructor(
    readonly setting: DurationSetting,
    readonly text: string,
    readonly problem: string,
  ) {
    super(`${setting.name} '${text}': ${problem}`);
    this.name = 'DurationRefused';
  }
}

/**
 * `text` in milliseconds for `setting`; undefined for `off` (where the setting has it).
 * Throws DurationRefused for anything the setting does not take.
 */
export function durationMs(text: string, setting: DurationSetting): number | undefined {
  const reading = read(text, setting);
  if ('problem' in reading) throw new DurationRefused(setting, text, reading.problem);
  return reading.ms;
}
