/**
 * The `typ` header values of a JWT access token, as media types without the `application/`
 * prefix and in lower case (RFC 7515 section 4.1.9: a typ without a `/` means
 * `application/<typ>`, and media type names are compared without regard to case): the
 * generic `JWT` most issuers send, and RFC 9068's `at+jwt`.
 */
const ACCESS_TOKEN_TYPES = new Set(['jwt', 'at+jwt']);

/** `at+jwt`, `application/AT+JWT` and `At+Jwt` are one media type. */
function mediaTypeOf(typ: string): string {
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

/**
 * Why a token's `typ` header does not fit an access token, or undefined when it does.
 * RFC 8725 section 3.11: a JWT of another kind signed by the same issuer (a DPoP proof
 * `dpop+jwt`, a logout token `logout+jwt`, a security event `secevent+jwt`, an explicitly
 * typed ID token) says so in `typ`, and must not be taken for a credential to call tools
 * with. Absent typ is accepted unless `requireAtJwt`: most issuers send none or `JWT`.
 */
export function tokenTypeProblem(typ: unknown, requireAtJwt: boolean): string | undefined {
  const type = typeof typ === 'string' ? mediaTypeOf(typ) : typ;
  if (requireAtJwt) {
    if (type === 'at+jwt') return undefined;
    return `the token's "typ" header is ${shown(typ)}, not an access token typed at+jwt (RFC 9068), which this gateway requires (auth.jwt.requireAtJwt)`;
  }
  if (typ === undefined || (typeof type === 'string' && ACCESS_TOKEN_TYPES.has(type))) return undefined;
  return `the token's "typ" header is ${shown(typ)}: another kind of JWT, not an access token (accepted: none, JWT, at+jwt)`;
}

/**
 * The header's value as a client may read it back, in the 401's WWW-Authenticate header too:
 * JSON with everything outside printable ASCII escaped (a header cannot carry it), bounded.
 */
function shown(typ: unknown): string {
  if (typ === undefined) return 'absent';
  const json = (JSON.stringify(typ) ?? String(typ)).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return json.length > 40 ? `${json.slice(0, 40)}...` : json;
}
