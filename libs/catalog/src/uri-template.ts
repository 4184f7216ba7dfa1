/**
 * Matching a concrete URI against an RFC 6570 URI template (levels 1 to 3), to route a
 * `resources/read` of an unlisted URI to the upstream whose template produced it.
 *
 * Routing only needs "could this template have produced this URI?", not the variable
 * values, so each expression becomes a permissive pattern and the whole URI is anchored.
 * Level-4 modifiers (`:3`, `*`) are accepted and ignored: they never change which
 * characters may appear. A template that is not well formed (an unclosed brace) is matched
 * literally rather than rejected, because it comes from an upstream we do not control.
 */
const EXPRESSION_PATTERNS: Record<string, string> = {
  // Simple expansion percent-encodes '/', '?' and '#', so a value never contains them.
  '': '[^/?#]+',
  // Reserved and fragment expansion keep reserved characters, so anything goes.
  '+': '.+',
  '#': '(?:#.*)?',
  // The operator character appears only when a variable is defined, hence optional.
  '/': '(?:/[^?#]*)?',
  '.': '(?:\\.[^/?#]*)?',
  ';': '(?:;[^/?#]*)?',
  '?': '(?:\\?[^#]*)?',
  '&': '(?:&[^#]*)?',
};

const escapeLiteral = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function compileUriTemplate(template: string): RegExp {
  let pattern = '';
  let pos = 0;
  while (pos < template.length) {
    const open = template.indexOf('{', pos);
    const close = open < 0 ? -1 : template.indexOf('}', open + 1);
    if (open < 0 || close < 0) {
      pattern += escapeLiteral(template.slice(pos));
      break;
    }
    pattern += escapeLiteral(template.slice(pos, open));
    const body = template.slice(open + 1, close);
    const operator = body.length > 0 && Object.hasOwn(EXPRESSION_PATTERNS, body[0]) ? body[0] : '';
    // An operator reserved for future use ('=', ',', '!', '@', '|') is not expandable; match
    // it as literal text, which is what a template processor would leave in place.
    pattern += /^[=,!@|]/.test(body) ? escapeLiteral(template.slice(open, close + 1)) : EXPRESSION_PATTERNS[operator];
    pos = close + 1;
  }
  return new RegExp(`^${pattern}$`);
}
