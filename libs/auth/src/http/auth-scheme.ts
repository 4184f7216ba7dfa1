/**
 * HTTP authentication schemes by their usual spelling, lowercased: those of the IANA registry
 * and a few in wide use outside it (`Token`: GitHub, Django REST framework; `NTLM`; AWS
 * Signature Version 4). Only these are named when a request sends one: the first word of
 * an Authorization header is not always a scheme (a key sent without `Bearer` is a first
 * word too), and the refusal is an audit row and the caller's answer.
 */
const KNOWN_SCHEMES = new Map(
  [
    'Basic', 'Concealed', 'Digest', 'DPoP', 'GNAP', 'HOBA', 'Mutual', 'Negotiate', 'OAuth', 'PrivateToken',
    'SCRAM-SHA-1', 'SCRAM-SHA-256', 'vapid', 'Token', 'NTLM', 'AWS4-HMAC-SHA256',
  ].map((scheme) => [scheme.toLowerCase(), scheme]),
);

/** What the gateway takes, said once for every refusal of another scheme. */
const TAKEN = 'this gateway does not take; it takes an API key or token as a Bearer token in the Authorization header or in X-API-Key';

/**
 * Why an Authorization header that is not a Bearer credential is refused: a credential of a
 * kind the gateway does not take, which a SIEM must tell apart from none at all. Names the
 * scheme when it is a known one (`Basic`, `Token`), in its usual spelling; never the value.
 * Worded so that the audit log's redaction leaves it whole: no `Authorization:` label, nothing
 * after the scheme's name that reads as its credential.
 */
export function unsupportedSchemeReason(authorization: string): string {
  const scheme = KNOWN_SCHEMES.get(/^\S+/.exec(authorization.trim())?.[0].toLowerCase() ?? '');
  return scheme === undefined
    ? `the Authorization header uses a scheme other than Bearer, which ${TAKEN}`
    : `the Authorization header uses the ${scheme} scheme, which ${TAKEN}`;
}
