/**
 * Matching a concrete URI against an RFC 6570 URI template (levels 1 to 3), to route a
 * `resources/read` of an unlisted URI to the upstream whose template produced it.
 *
 * Routing only needs "could this template have produced this URI?", not the variable
 * values, so each expression becomes a permissive run of characters and the whole URI is
 * anchored. Level-4 modifiers (`:3`, `*`) are accepted and ignored: they never change which
 * characters may appear. A template that is not well formed (an unclosed brace) is matched
 * literally rather than rejected, because it comes from an upstream we do not control.
 *
 * Why not a regular expression: the host chooses the URI and the upstream the template, and
 * a template with several reserved expressions (`file:///{+a}/x/{+b}/y/{+c}.md`) made a
 * backtracking RegExp take 34 s on one 8 KB URI (285 s on 16 KB), holding the event loop
 * and so every host of the daemon. The template becomes a small automaton instead, run over
 * the URI once with the set of states it may be in: time is the URI's length times the
 * template's, whatever the URI.
 */

/** Which characters a run of an expression may hold, as a test of one UTF-16 code unit. */
type CharClass = (code: number) => boolean;

const SLASH = 0x2f;
const QUESTION = 0x3f;
const HASH = 0x23;
/** RegExp `.`: anything but a line terminator (the patterns this replaces used it). */
const anyButLineEnd: CharClass = (c) => c !== 0x0a && c !== 0x0d && c !== 0x2028 && c !== 0x2029;
/** Simple expansion percent-encodes '/', '?' and '#', so a value never contains them. */
const segment: CharClass = (c) => c !== SLASH && c !== QUESTION && c !== HASH;
const beforeQuery: CharClass = (c) => c !== QUESTION && c !== HASH;
const beforeFragment: CharClass = (c) => c !== HASH;

/**
 * Each operator as the text it adds: a required run (`+`: one or more), or an optional part
 * that starts with the operator's own character (it appears only when a variable is defined).
 */
type Expression = { run: CharClass } | { optional: string; rest: CharClass };

const EXPRESSIONS: Record<string, Expression> = {
  '': { run: segment },
  // Reserved expansion keeps reserved characters, so anything goes.
  '+': { run: anyButLineEnd },
  '#': { optional: '#', rest: anyButLineEnd },
  '/': { optional: '/', rest: beforeQuery },
  '.': { optional: '.', rest: segment },
  ';': { optional: ';', rest: segment },
  '?': { optional: '?', rest: beforeFragment },
  '&': { optional: '&', rest: beforeFragment },
};

/** One state: it consumes a character its class accepts and moves on to `to`; `also` are the states it stands for without consuming. */
interface State {
  accepts?: CharClass;
  to: number;
  also: number[];
}

export interface UriTemplateMatcher {
  /** Whether the template could have produced `uri`. */
  test(uri: string): boolean;
}

export function compileUriTemplate(template: string): UriTemplateMatcher {
  const states: State[] = [];
  const add = (state: State) => states.push(state) - 1;
  const literal = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      add({ accepts: (c) => c === code, to: states.length + 1, also: [] });
    }
  };
  let pos = 0;
  while (pos < template.length) {
    const open = template.indexOf('{', pos);
    const close = open < 0 ? -1 : template.indexOf('}', open + 1);
    if (open < 0 || close < 0) {
      literal(template.slice(pos));
      break;
    }
    literal(template.slice(pos, open));
    const body = template.slice(open + 1, close);
    pos = close + 1;
    // An operator reserved for future use ('=', ',', '!', '@', '|') is not expandable; match
    // it as literal text, which is what a template processor would leave in place.
    if (/^[=,!@|]/.test(body)) {
      literal(template.slice(open, close + 1));
      continue;
    }
    const expression = EXPRESSIONS[body.length > 0 && Object.hasOwn(EXPRESSIONS, body[0]) ? body[0] : ''];
    if ('run' in expression) {
      // One character, then any number more: the state after it may loop back.
      const first = add({ accepts: expression.run, to: states.length + 1, also: [] });
      add({ to: -1, also: [first, states.length + 1] });
    } else {
      // Either skip the part, or its operator character and then any run of the rest.
      const skip = add({ to: -1, also: [] });
      const code = expression.optional.charCodeAt(0);
      add({ accepts: (c) => c === code, to: states.length + 1, also: [] });
      const loop = add({ to: -1, also: [] });
      const rest = add({ accepts: expression.rest, to: loop, also: [] });
      states[loop].also.push(rest, states.length);
      states[skip].also.push(skip + 1, states.length);
    }
  }
  const accept = add({ to: -1, also: [] });
  return { test: (uri) => run(states, accept, uri) };
}

/** Runs the automaton over `uri`, keeping every state it may be in after each character. */
function run(states: readonly State[], accept: number, uri: string): boolean {
  // Marks are generations, so one array serves every step without being cleared.
  const seen = new Uint32Array(states.length);
  let generation = 1;
  let current: number[] = [];
  let next: number[] = [];
  // With a stack, not recursion: a long template from an upstream must not overflow the call stack.
  const pending: number[] = [];
  const enter = (set: number[], state: number) => {
    pending.push(state);
    while (pending.length > 0) {
      const at = pending.pop()!;
      if (seen[at] === generation) continue;
      seen[at] = generation;
      set.push(at);
      for (const other of states[at].also) pending.push(other);
    }
  };
  enter(current, 0);
  for (let i = 0; i < uri.length && current.length > 0; i++) {
    const code = uri.charCodeAt(i);
    generation++;
    next.length = 0;
    for (const state of current) {
      const { accepts, to } = states[state];
      if (accepts?.(code)) enter(next, to);
    }
    [current, next] = [next, current];
  }
  return current.includes(accept);
}
