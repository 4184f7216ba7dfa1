import { z } from 'zod';
import { intIn, nonEmpty } from './config.schema.fields.js';

/*
 * The auth section of the config file (docs/auth.md): the mode, the authorization servers
 * named to clients, and the one OIDC issuer whose JWTs are accepted. Apart because the JWT
 * settings decide whose tokens are believed, and read best on their own.
 */

/** Asymmetric JWS algorithms only: a shared secret would have to be in the gateway's config. */
const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** How a claim path is read (libs/auth claimAt), said once for each of the three. */
const CLAIM_PATH = (what: string) =>
  `${what}. A path: dots for nested claims (realm_access.roles); at each level the longest key the path starts with is taken, so a key holding dots works (https://corp.example.com/roles).`;

/**
 * A token's iss and aud are compared with these exactly, and no issuer puts white space
 * around them: a value pasted with a space (` switchboard`) would refuse every token, with
 * nothing in the refusal to show why. So the config refuses it.
 */
function withoutSurroundingSpace<T extends z.ZodType<string>>(schema: T, claim: 'iss' | 'aud') {
  return schema.superRefine((value, ctx) => {
    if (value.trim() === value) return;
    ctx.addIssue({
      code: 'custom',
      message: `has white space at its start or end ('${JSON.stringify(value).slice(1, -1)}'): no token's ${claim} could match it; remove it`,
    });
  });
}

export const authSchema = z.strictObject({
  mode: z
    .enum(['none', 'required'])
    .default('none')
    .describe('required: every HTTP request needs a credential (an API key, or a JWT when auth.jwt is set); none: loopback listeners only.'),
  authorizationServers: z
    .array(z.url({ error: 'must be an absolute URL' }))
    .default([])
    .describe('OAuth authorization servers named in /.well-known/oauth-protected-resource (RFC 9728).'),
  jwt: z
    .strictObject({
      // The spaces are checked before the URL: z.url() trims what it reads, which would hide
      // them (and quietly compare the trimmed value). A string's url check, not z.url(), as
      // that runs after the check before it; a pipe would lose the JSON schema's format.
      issuer: withoutSurroundingSpace(z.string(), 'iss').url({ error: 'must be an absolute URL' }).describe(
        'The iss every token must carry, compared exactly; no white space at its start or end.',
      ),
      audience: withoutSurroundingSpace(nonEmpty(), 'aud').describe('The aud every token must carry (this gateway), compared exactly; no white space at its start or end.'),
      jwksUrl: z
        .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
        .describe("Where the issuer's signing keys are (JWKS); fetched, cached, and refetched for an unknown key id."),
      algorithms: z
        .array(z.enum(JWT_ALGORITHMS))
        .min(1)
        .default(['RS256', 'ES256'])
        .describe('Signature algorithms accepted; none is never accepted.'),
      clockToleranceSec: intIn(0, 300, 'must be an integer from 0 to 300').default(30).describe('Leeway for exp and nbf.'),
      requireAtJwt: z
        .boolean()
        .default(false)
        .describe('true: only tokens whose typ header is at+jwt (RFC 9068). false: also none and JWT. Other kinds of JWT (dpop+jwt, logout+jwt, ...) are refused either way.'),
      maxTokenLifetimeSec: intIn(60, 31_536_000, 'must be an integer from 60 to 31536000 (a year)')
        .default(86_400)
        .describe('Tokens whose exp is further away than this many seconds (plus clockToleranceSec) are refused; default a day.'),
      claims: z
        .strictObject({
          principal: nonEmpty().default('sub').describe(CLAIM_PATH('Claim naming the principal')),
          roles: nonEmpty().default('roles').describe(CLAIM_PATH('Claim with the roles: an array, or a space-separated string')),
          groups: nonEmpty().default('groups').describe(CLAIM_PATH('Claim with the groups: an array, or a space-separated string')),
        })
        .prefault({}),
    })
    .optional()
    .describe('Accept JWT bearer tokens from one OIDC issuer, verified against its JWKS.'),
});
