/**
 * The URI an MCP SDK server will look up for `uri`, when it is not `uri` itself; undefined
 * when the two are the same resource to it (or `uri` is no URL at all).
 *
 * The SDKs parse a requested URI the WHATWG way before they look it up: the TypeScript
 * McpServer (1.x and 2.x) by `new URL(uri).toString()`, and the Python SDK's types make it
 * a pydantic AnyUrl (the Rust url crate, WHATWG too). That parse lowercases the scheme, drops leading and trailing spaces and
 * controls and every tab and line break, takes `\` for `/` in special schemes (file, http,
 * ...), resolves dot segments and drops `localhost` from a file: URI. So
 * `DEMO://x/secret` and `demo://x/public/.<TAB>./secret` are `demo://x/secret` to such a
 * server, while a rule matching text sees another URI. Percent-encoding the parse adds
 * (a space as %20) changes nothing a rule tells apart, and is not reported.
 */
export function uriAsServersRead(uri: string): string | undefined {
  if (!URL.canParse(uri)) return undefined;
  const read = new URL(uri).href;
  return read === uri || lenientlyDecoded(read) === lenientlyDecoded(uri) ? undefined : read;
}

/** decodeURI's reading, or the text itself where it holds a malformed escape. */
function lenientlyDecoded(text: string): string {
  try {
    return decodeURI(text);
  } catch {
    return text;
  }
}

/**
 * Why the daemon refuses a resource URI (-32602) before any rule sees it, or undefined
 * (`policy check` says so too). Rules match URIs as text, and an upstream resolves them:
 * `file:///docs/../secret/key` would pass a rule on `file:///docs/**` and read
 * /secret/key. So dot segments (also percent-encoded) are refused, and so are empty
 * segments in a file: path (`file:////secret`), which a file system reads as one slash.
 * Hosts send URIs as the lists gave them, which have neither.
 */
export function unnormalizedPath(uri: string): string | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri);
  let path = (scheme ? uri.slice(scheme[0].length) : uri).split(/[?#]/, 1)[0];
  if (path.startsWith('//')) {
    // An authority (`//host`) is not part of the path; without a slash after it there is none.
    const slash = path.indexOf('/', 2);
    path = slash === -1 ? '' : path.slice(slash);
  }
  if (path.split('/').some((s) => /^(?:\.|%2e){1,2}$/i.test(s))) return 'must not contain . or .. path segments';
  if (scheme?.[1].toLowerCase() === 'file' && /\/\//.test(path)) return 'must not contain empty path segments (//)';
  return undefined;
}
