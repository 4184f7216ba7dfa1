import { describe, expect, it } from 'vitest';
import { createRedactor } from './redactor.js';

const LETTERS = 'QwErTyUiOpAsDfGhJkLzXcVbNmPlMoKnIjBhUyGvTfCrDxEsZa';
const ALNUM = `${LETTERS}0123456789`;
const HEX = '0123456789abcdef';
const B64URL = `${ALNUM}_-`;

/**
 * `length` characters of `alphabet`, spread over it. Built at run time, so that secret
 * scanners see no credential-shaped literal in this file.
 */
function body(length: number, alphabet: string, seed = 1): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[(i * 13 + seed * 7) % alphabet.length];
  return out;
}

// Each at the shortest length its vendor issues, which is also the shortest the pattern takes.
const TOKENS: [kind: string, token: string][] = [
  ['huggingface-token', `hf_${body(34, LETTERS)}`],
  ['huggingface-token', `api_org_${body(34, LETTERS)}`],
  ['groq-key', `gsk_${body(52, ALNUM)}`],
  ['openrouter-key', `sk-or-v1-${body(64, HEX)}`],
  ['perplexity-key', `pplx-${body(48, ALNUM)}`],
  ['sendgrid-key', `SG.${body(22, B64URL)}.${body(43, B64URL, 2)}`],
  ['pypi-token', `pypi-AgEIcHlwaS5vcmc${body(50, B64URL)}`],
  ['docker-hub-token', `dckr_pat_${body(27, B64URL)}`],
  ['docker-hub-token', `dckr_oat_${body(32, B64URL)}`],
  ['digitalocean-token', `dop_v1_${body(64, HEX)}`],
  ['digitalocean-token', `doo_v1_${body(64, HEX)}`],
  ['digitalocean-token', `dor_v1_${body(64, HEX)}`],
  ['shopify-token', `shpat_${body(32, HEX)}`],
  ['shopify-token', `shpca_${body(32, HEX)}`],
  ['shopify-token', `shppa_${body(32, HEX)}`],
  ['shopify-token', `shpss_${body(32, HEX)}`],
  ['databricks-token', `dapi${body(32, HEX)}`],
  ['databricks-token', `dapi${body(32, HEX)}-2`],
  ['linear-key', `lin_api_${body(40, ALNUM)}`],
  ['notion-token', `ntn_${body(11, '0123456789')}${body(35, ALNUM)}`],
  ['notion-token', `secret_${body(43, ALNUM)}`],
  ['atlassian-token', `ATATT3${body(186, `${B64URL}=`)}`],
  ['vercel-token', `vcp_${body(56, B64URL)}`],
  ['vercel-token', `vci_${body(56, B64URL)}`],
  ['vercel-token', `vca_${body(56, B64URL)}`],
  ['vercel-token', `vcr_${body(56, B64URL)}`],
  ['vercel-token', `vck_${body(56, B64URL)}`],
  ['supabase-key', `sbp_${body(40, '0123456789abcdefghijklmnopqrstuvwxyz')}`],
  ['supabase-key', `sb_secret_${body(31, B64URL)}`],
];

const redactor = createRedactor();

describe('redact: vendor tokens (defaults)', () => {
  it.each(TOKENS)('finds a %s in a string, in JSON text and in a URL', (kind, token) => {
    const marker = `[REDACTED:${kind}]`;
    expect(redactor.redactText(`export TOKEN_FOR_CI ${token} now`)).toBe(`export TOKEN_FOR_CI ${marker} now`);
    const json = JSON.stringify({ env: { VALUE: token }, note: 'deploy' });
    expect(JSON.parse(redactor.redactText(json))).toEqual({ env: { VALUE: marker }, note: 'deploy' });
    expect(redactor.redactText(`https://api.example.com/v1/run?q=a%20b&k=${token}&page=2`)).toBe(
      `https://api.example.com/v1/run?q=a%20b&k=${marker}&page=2`,
    );
    expect(redactor.redact({ body: `curl -d '${token}'` })).toEqual({ body: `curl -d '${marker}'` });
  });

  it('finds a token at either end of a long text whose other runs of token characters are short', () => {
    const prose = 'a_b-c=d '.repeat(40) + 'identifiers_with_underscores ';
    const [, first] = TOKENS[0];
    const [, last] = TOKENS[7];
    expect(redactor.redactText(`${first} ${prose}${last}`)).toBe(
      `[REDACTED:huggingface-token] ${prose}[REDACTED:docker-hub-token]`,
    );
  });

  it('hides the whole token when more of its characters follow, not leaving a tail', () => {
    expect(redactor.redactText(`k=shpat_${body(32, HEX)}${body(8, HEX, 3)} ok`)).toBe('k=[REDACTED:shopify-token] ok');
  });

  it.each([
    ['the words themselves', 'shpat, the hf_ prefix, gsk_ keys, pplx- keys, dckr_pat_ and SG. are vendor prefixes'],
    ['a short text after hf_', 'call hf_hub_download or hf_HubApiClient with hf_token'],
    ['SG. in prose', `Signed, SG. Smith. SG.${body(22, B64URL)}. is not a key, nor SG.${body(22, B64URL)}.${body(20, B64URL)}`],
    ['prefixes one character short', [
      `hf_${body(33, LETTERS)}`,
      `gsk_${body(51, ALNUM)}`,
      `shpat_${body(31, HEX)}`,
      `dapi${body(31, HEX)}`,
      `lin_api_${body(39, ALNUM)}`,
      `dckr_pat_${body(26, B64URL)}`,
      `sbp_${body(39, HEX)}`,
      `ATATT3${body(185, B64URL)}`,
      `vcp_${body(55, B64URL)}`,
      `ntn_${body(11, '0123456789')}${body(34, ALNUM)}`,
      `dop_v1_${body(63, HEX)}`,
    ].join(' ')],
    ['a prefix inside a word', `shf_${body(40, LETTERS)} top_secret_${body(43, ALNUM)} xdapi${body(32, HEX)}`],
    ['identifiers that begin like a prefix', 'secret_sauce_recipe vcpkg_installed pypi-simple dapibus lin_api_version ntn_2024'],
    ['long runs with no prefix (a digest, a base64 blob)', `sha256:${body(64, HEX)} data:${body(120, `${ALNUM}+/`)}==`],
  ])('keeps %s', (_, text) => {
    expect(redactor.redactText(text)).toBe(text);
  });

  it('ends on 100 KB runs of vendor prefixes (within the test timeout) and still finds a token after them', () => {
    const fill = (unit: string) => unit.repeat(Math.ceil(100_000 / unit.length));
    const inputs = [
      fill('hf_'),
      fill('SG.'),
      fill(`SG.${body(22, B64URL)}.`),
      fill('ntn_12345678901'),
      fill('dapi'),
      fill('secret_'),
      fill(`shpat_${body(31, HEX)} `),
      `ATATT3${'A'.repeat(100_000)}`,
      'A'.repeat(100_000),
    ];
    for (const input of inputs) {
      const [, token] = TOKENS[0];
      expect(redactor.redactText(`${input} ${token}`).endsWith(' [REDACTED:huggingface-token]'), input.slice(0, 20)).toBe(true);
    }
  });
});
