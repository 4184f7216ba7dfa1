/**
 * The built-in catalogue of what the audit log treats as secret.
 *
 * Key patterns are tested against a normalized object key (lower case, without '-', '_', '.'
 * and whitespace), and a hit replaces the member's whole value. Value patterns are searched
 * inside every string, whatever its key, because secrets also travel inside innocent fields:
 * a `command` with `--password`, a `query` with a connection URL, a `body` with JSON text.
 *
 * Every value pattern must stay linear-time on hostile input (arguments come from the host):
 * no nested quantifiers, and a pattern that requires something after an unbounded run (JWT's
 * '.') checks with a lookbehind that its prefix starts a word, so a scan cannot restart inside
 * that run. Patterns start with a literal and put such lookbehinds after it: a leading
 * lookbehind keeps V8 from skipping ahead to candidate characters and made the combined
 * regex ten times slower.
 *
 * A key of a fixed length (AWS, Google, npm, the vendor tokens) is matched as its length or
 * more: the minimum decides what counts as one, and the rest of the run is taken too, so that
 * a value with more characters of the same kind after it (pasted twice, or a longer secret) is
 * hidden whole rather than leaving its tail in the log.
 */

export interface SecretKeyPattern {
  /** A short label, for documentation and tests; a redacted key's value is a plain '[REDACTED]'. */
  readonly kind: string;
  /** Tested against the normalized key. */
  readonly pattern: RegExp;
}

export interface SecretValuePattern {
  /** Written into the text as `[REDACTED:<kind>]`. */
  readonly kind: string;
  /**
   * A regex source, matched case-sensitively (`ci()` spells case-insensitive words). An
   * optional `(?<secret>…)` group, which must end the match, marks the part to replace, so a
   * label such as `password=` or a URL's user and host stay readable; without one, the whole
   * match is replaced.
   */
  readonly source: string;
  /**
   * Every match holds a run of at least this many characters of [A-Za-z0-9_=-]: a text with no
   * such run is searched without this pattern. Vendor tokens are long runs behind a prefix,
   * and most texts have none, so they then cost a row nothing but the check for the run.
   */
  readonly minRun?: number;
  /**
   * A second look at a match (the secret group, else the whole match), for a shape a regex
   * cannot check: when it returns false, the match is not a secret and the scan goes on from
   * its next character. Must be linear in the length of its input.
   */
  readonly verify?: (secret: string) => boolean;
  /**
   * Follows a command's name to a secret in a later word of its line (`mysql … -p<password>`):
   * also searched in the line an argv array naming one of COMMANDS_WITH_SECRET_ARGUMENTS
   * stands for, since the array's items, scanned one by one, never show the command.
   */
  readonly command?: true;
}

export const DEFAULT_SECRET_KEYS: readonly SecretKeyPattern[] = [
  // password, passwd, db_password, PGPASSWORD, pwd, passphrase. An env map's PWD (the working
  // directory) is hidden too: failing closed costs little there. A name ending in 'pass'
  // (nodemailer's auth {user, pass}, smtp_pass, DB_PASS), but not bypass, compass and kin.
  { kind: 'password', pattern: /passw(?:or)?d|passphrase|pwd|(?<!by|com|tres|sur|over|under|boarding)pass$/ },
  // secret, client_secret, secretAccessKey, webhookSecret; 'secretary' too, an accepted false positive.
  { kind: 'secret', pattern: /secret/ },
  // token, access_token, refresh_token, id_token, authToken, csrf-token, x-amz-security-token.
  // Only a name ending in 'token', so counters (max_tokens, maxTokens, token_count,
  // total_tokens) and tokenizer, token_type, token_endpoint stay; the excluded names are cursors
  // or counters, not credentials (MCP's own _meta.progressToken is on most tool calls).
  {
    kind: 'token',
    pattern:
      /(?<!^(?:max|min|num|total|page|next|prev|continuation|sync|progress))token$|(?:access|refresh|auth|id|bearer|session|api)tokens$/,
  },
  // apiKey, api_key, x-api-key, API-KEY, x-goog-api-key.
  { kind: 'api-key', pattern: /apikey/ },
  // aws_access_key_id, AWS_SECRET_ACCESS_KEY, accessKey.
  { kind: 'access-key', pattern: /accesskey/ },
  // private_key, privateKey, privkey; also signing, encryption and master keys.
  { kind: 'private-key', pattern: /priv(?:ate)?key|signingkey|encryptionkey|masterkey/ },
  // authorization, proxy-authorization, auth, basic_auth, x-auth; not author, authority, oauth.
  { kind: 'authorization', pattern: /authorization$|(?<!o)auth$/ },
  // cookie, cookies, set-cookie, sessionCookie.
  { kind: 'cookie', pattern: /cookie/ },
  // credential, credentials, aws_credentials.
  { kind: 'credential', pattern: /credential/ },
  // sessionid, session_id, session_key, session_token (Mcp-Session-Id included: it is what a
  // client presents to continue a session, so whoever reads it can resume it).
  { kind: 'session', pattern: /session(?:id|key|token|secret)/ },
  // connectionString, connection_string, connStr: they usually embed a password.
  { kind: 'connection-string', pattern: /connectionstring|connstr/ },
  // signature, x-hub-signature-256, X-Amz-Signature. Redacted although a signature is not a
  // key: a presigned URL's or a webhook's signature is a replayable capability, and an audit
  // reader never needs its value.
  { kind: 'signature', pattern: /signature/ },
];

/**
 * Spells a plain word case-insensitively ('ab' → '[Aa][Bb]'). The value patterns are combined
 * into one regex for a single pass, and Node 20 has no inline `(?i:…)` modifier.
 */
function ci(word: string): string {
  return word.replace(/[a-z]/gi, (c) => `[${c.toUpperCase()}${c.toLowerCase()}]`);
}

const SEP = '[-_]?';

/** Names that label a secret in free text: `PGPASSWORD=`, `"token":`, `--api-key`. */
const SECRET_WORD = [
  `${ci('passw')}(?:${ci('or')})?${ci('d')}`,
  ci('passphrase'),
  ci('pwd'),
  `(?:${ci('private')}|${ci('secret')}|${ci('access')}|${ci('api')}|${ci('encryption')}|${ci('signing')}|${ci('account')})${SEP}${ci('key')}`,
  ci('secret'),
  ci('token'),
  `${ci('credential')}[sS]?`,
  `${ci('session')}${SEP}${ci('id')}`,
  ci('signature'),
  // Azure SAS and similar URL signatures (`&sig=`); only as a whole word, 'sig' is a common syllable.
  `${ci('sig')}(?<![A-Za-z]${ci('sig')})`,
].join('|');

/**
 * A PEM private key block through its END line, or through the end of a truncated text.
 * Also a labelled value's first choice: after `"private_key":"` (a service-account JSON
 * written by a file tool) a value that stops at the first newline or escaped `\n` would hide
 * only the BEGIN line, and leave the key's body in the log with no header for the PEM
 * pattern to find.
 */
const PEM_PRIVATE_KEY = String.raw`-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)`;

/** An optional quote after a label, escaped when the text is itself JSON inside JSON. */
const QUOTE = String.raw`(?:\\?["'])?`;
/** `=`, `:` or `=>` between a label and its value. */
const ASSIGN = String.raw`${QUOTE}[ \t]*[=:]>?[ \t]*`;
/**
 * A value after an optional opening quote: up to the closing quote (which stays, so JSON text
 * remains JSON) when the lookbehind sees that quote, otherwise a bare word.
 */
const VALUE = String.raw`${QUOTE}(?<secret>${PEM_PRIVATE_KEY}|(?<=")[^"\\\r\n]*|(?<=')[^'\r\n]*|[^\s"'&;,]+)`;

/** A flag's value: up to a closing quote (which stays) after an opening one, else a bare word. */
const FLAG_VALUE = String.raw`["']?(?<secret>(?<=")[^"\r\n]*|(?<=')[^'\r\n]*|[^\s"']+)`;
/**
 * A setter's flags before the name it sets: `--global`, `--location=project`, `--profile dev`,
 * at most 4. Each one starts with a space and a '-', so a failing scan backs out of a run of
 * them once per flag (a word after one is its value or the name), not in every combination.
 * Unbounded, a text of `config set --aconfig set --aconfig set …` made each `config set` in it
 * look through the rest of the text: quadratic (2 s for 100 KB).
 */
const CONFIG_FLAGS = String.raw`(?:[ \t]+--?[A-Za-z][\w-]*(?:=\S*|[ \t]+[^\s-]\S*)?){0,4}`;
/**
 * What may stand between a command's name and its password flag: the rest of the same command
 * (not past a line end, ';', '&' or '|', where the next command's `-p` may be a port), and at
 * most 64 characters (room for a host, a port and a user before the password): a text full of
 * command names costs a look of that length after each, so this bound sets the worst case's
 * cost (a megabyte of `mysql ` takes ~5 times a plain text's time at 64, ~25 times at 256).
 */
const COMMAND_GAP = String.raw`[^\r\n;&|]{0,64}?`;

/** A quoted word (spaces and all) or a bare one; one reading only, as a bare one starts with neither quote. */
const WORD = String.raw`(?:"[^"\r\n]*"|'[^'\r\n]*'|[^\s"']\S*)`;
/**
 * sshpass's options before its `-p`: at most 4 (it has few, and one password source), each a
 * word that starts with '-' (`-v`, `-e`), or `-P` and the prompt it waits for (`-P "Enter
 * passphrase"`). Unbounded, a text of `sshpass -xsshpass -xsshpass …` made each `sshpass` in it
 * look through the rest of the text: quadratic (2 s for 100 KB).
 */
const SSHPASS_OPTIONS = String.raw`(?:[ \t]+(?:-P[ \t]*${WORD}|-[^\spP]\S*)){0,4}`;
/**
 * `dotnet user-secrets`' options, up to 4: every one takes a value (`--project src/Web`,
 * `-c:Release`) but `-v`/`--verbose`, which must be known, for a generic flag would take the
 * secret's name for its value and the name for the secret.
 */
const USER_SECRETS_OPTIONS = String.raw`(?:[ \t]+(?:-v(?=\s)|--verbose(?=\s)|--?(?!v\s|verbose\s)[A-Za-z][\w-]*(?:[=:]\S*|[ \t]+${WORD}))){0,4}`;
/** Blanks between a .netrc file's words, which may stand on one line or several. */
const NETRC_GAP = String.raw`[ \t\r\n]+`;

/**
 * Tokens that vendors give a prefix of their own, so that scanners find them: each has a
 * literal prefix and a known length and alphabet (as the vendor or the common secret-scanning
 * rule sets describe it), so prose and identifiers do not match. A prefix that is also a
 * common syllable ('hf_', 'gsk_', 'dapi', 'sbp_', 'secret_') is taken only at the start of a
 * word, checked by a lookbehind after the literal.
 */
const VENDOR_TOKENS: readonly SecretValuePattern[] = [
  // Hugging Face user access tokens (hf_ and 34 letters) and organization API tokens.
  {
    kind: 'huggingface-token',
    source: String.raw`hf_(?<![A-Za-z0-9_-]hf_)[A-Za-z0-9]{34,}|api_org_(?<![A-Za-z0-9_-]api_org_)[A-Za-z0-9]{34,}`,
    minRun: 37,
  },
  // Groq API keys: gsk_ and 52 letters and digits.
  { kind: 'groq-key', source: String.raw`gsk_(?<![A-Za-z0-9_-]gsk_)[A-Za-z0-9]{52,}`, minRun: 56 },
  // OpenRouter keys: sk-or-v1- and 64 hex digits (the '-' after 'or' keeps them from openai-key).
  { kind: 'openrouter-key', source: String.raw`sk-or-v1-[0-9a-f]{64,}`, minRun: 73 },
  // Perplexity API keys.
  { kind: 'perplexity-key', source: String.raw`pplx-[A-Za-z0-9]{48,}`, minRun: 53 },
  // SendGrid API keys: SG.<22>.<43>, base64url.
  { kind: 'sendgrid-key', source: String.raw`SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43,}`, minRun: 43 },
  // PyPI API tokens: a macaroon whose base64 starts with the location pypi.org.
  { kind: 'pypi-token', source: String.raw`pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`, minRun: 70 },
  // Docker Hub personal and organization access tokens.
  { kind: 'docker-hub-token', source: String.raw`dckr_pat_[A-Za-z0-9_-]{27,}|dckr_oat_[A-Za-z0-9_-]{32,}`, minRun: 36 },
  // DigitalOcean personal access, OAuth and refresh tokens.
  { kind: 'digitalocean-token', source: String.raw`do[opr]_v1_[0-9a-f]{64,}`, minRun: 71 },
  // Shopify admin API access tokens, custom and private app tokens, shared secrets.
  { kind: 'shopify-token', source: String.raw`shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32,}`, minRun: 38 },
  // Databricks personal access tokens: dapi and 32 hex digits, sometimes -<digit>.
  { kind: 'databricks-token', source: String.raw`dapi(?<![A-Za-z0-9_-]dapi)[0-9a-f]{32,}(?:-[0-9])?`, minRun: 36 },
  // Linear personal API keys.
  { kind: 'linear-key', source: String.raw`lin_api_[A-Za-z0-9]{40,}`, minRun: 48 },
  // Notion integration tokens: ntn_ and 11 digits and 35 letters and digits; before 2024,
  // secret_ and 43 letters and digits.
  {
    kind: 'notion-token',
    source: String.raw`ntn_[0-9]{11}[A-Za-z0-9]{35,}|secret_(?<![A-Za-z0-9_-]secret_)[A-Za-z0-9]{43,}`,
    minRun: 50,
  },
  // Atlassian (Jira, Confluence, Bitbucket) API tokens: ATATT3 and 186 characters.
  { kind: 'atlassian-token', source: String.raw`ATATT3[A-Za-z0-9_=-]{186,}`, minRun: 192 },
  // Vercel personal, integration, app access and refresh tokens, and AI Gateway keys.
  { kind: 'vercel-token', source: String.raw`vc[pikar]_[A-Za-z0-9_-]{56,}`, minRun: 60 },
  // Supabase personal access tokens (management API) and project secret keys.
  {
    kind: 'supabase-key',
    source: String.raw`sbp_(?<![A-Za-z0-9_-]sbp_)[a-z0-9]{40,}|sb_secret_[A-Za-z0-9_-]{31,}`,
    minRun: 41,
  },
];

export const DEFAULT_VALUE_PATTERNS: readonly SecretValuePattern[] = [
  // PEM private keys (PKCS#8, RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP blocks), through the END
  // line; without one (a truncated text), through the end of the text.
  {
    kind: 'private-key',
    source: PEM_PRIVATE_KEY,
  },
  // JSON Web Tokens: base64url header and payload that both start with '{"', any signature.
  {
    kind: 'jwt',
    source: String.raw`eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`,
  },
  // An Authorization or Proxy-Authorization header in text (curl -H, a raw request, JSON):
  // keeps the scheme (Bearer, Basic, token…), replaces the credential.
  {
    kind: 'authorization',
    source: String.raw`${ci('authorization')}${ASSIGN}${QUOTE}(?:[A-Za-z]{1,20}[ \t]+)?(?<secret>[^\s"',;\\]+)`,
  },
  // A Cookie or Set-Cookie header in text: the rest of the line, since it holds several pairs.
  {
    kind: 'cookie',
    source: String.raw`(?:${ci('set-')})?${ci('cookie')}${QUOTE}[ \t]*:[ \t]*${QUOTE}(?<secret>[^\r\n"'\\]+)`,
  },
  // A bare `Bearer <token>`; 8 characters at least, so prose ("the bearer token") stays.
  {
    kind: 'bearer-token',
    source: String.raw`${ci('bearer')}(?<![A-Za-z]${ci('bearer')})[ \t]+(?<secret>[A-Za-z0-9._~+/-]{8,}=*)`,
  },
  // A bare `Basic <credentials>` (RFC 7617: base64 of user-id:password), e.g. in a header
  // list or a curl line without its `Authorization:` label. 'Basic' is a common word, so the
  // token must be 8 base64 characters at least and decode to printable UTF-8 text holding a
  // ':' ("Basic information" and "basic authentication" stay).
  {
    kind: 'basic-credentials',
    source: String.raw`${ci('basic')}(?<![A-Za-z]${ci('basic')})[ \t]+(?<secret>[A-Za-z0-9+/]{8,}={0,2})`,
    verify: isBasicCredential,
  },
  // An AWS secret access key after its usual label (env var, ~/.aws/credentials, JSON), or
  // after the label and a space (a printf, a table). The space is safe here and not for other
  // labels because the value must have the key's 40 characters: prose after the label has not.
  {
    kind: 'aws-secret-key',
    source: String.raw`${ci('aws')}${SEP}${ci('secret')}(?:${SEP}${ci('access')})?${SEP}${ci('key')}(?:${ASSIGN}|[ \t]+)${QUOTE}(?<secret>[A-Za-z0-9/+=]{40,})`,
  },
  // AWS access key ids: long-term (AKIA) and temporary (ASIA).
  { kind: 'aws-access-key-id', source: String.raw`(?:AKIA|ASIA)[A-Z0-9]{16,}` },
  // Azure storage AccountKey= and Service Bus / Event Hubs SharedAccessKey= in connection strings.
  {
    kind: 'azure-key',
    source: String.raw`(?:${ci('accountkey')}|${ci('sharedaccesskey')})=(?<secret>[A-Za-z0-9+/=]{20,})`,
  },
  // Google API keys.
  { kind: 'google-api-key', source: String.raw`AIza[0-9A-Za-z_-]{35,}` },
  // GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens; fine-grained PATs.
  { kind: 'github-token', source: String.raw`gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}` },
  // GitLab personal access tokens.
  { kind: 'gitlab-token', source: String.raw`glpat-[A-Za-z0-9_-]{20,}` },
  // Slack incoming webhooks and workflow triggers: the path is the credential.
  {
    kind: 'slack-webhook',
    source: String.raw`hooks\.slack\.com/(?:services|workflows|triggers)/(?<secret>[A-Za-z0-9/_-]+)`,
  },
  // Slack bot, user, refresh and legacy tokens (xox?-), and app-level tokens (xapp-1-A0…-…).
  { kind: 'slack-token', source: String.raw`xox[abeprs]-[A-Za-z0-9-]{10,}|xapp-[0-9]{1,4}-[A-Za-z0-9-]{10,}` },
  // Stripe secret and restricted keys (live and test) and webhook signing secrets.
  { kind: 'stripe-key', source: String.raw`(?:sk|rk)_(?:live|test)_(?<![A-Za-z0-9](?:sk|rk)_(?:live|test)_)[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,}` },
  // Anthropic API and admin keys. Before openai-key, which would also match them.
  { kind: 'anthropic-key', source: String.raw`sk-ant-(?<![A-Za-z0-9_-]sk-ant-)[A-Za-z0-9_-]{20,}` },
  // OpenAI project, service-account, admin and legacy keys; legacy ones have no '-' after
  // 'sk-', which keeps kebab-case words such as 'desk-…' or 'sk-learn-…' out.
  {
    kind: 'openai-key',
    source: String.raw`sk-(?<![A-Za-z0-9_-]sk-)(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{32,})`,
  },
  // npm access tokens.
  { kind: 'npm-token', source: String.raw`npm_[A-Za-z0-9]{36,}` },
  ...VENDOR_TOKENS,
  // Switchboard's own API keys: 'sbk_' and 32 random bytes in base64url (43 characters; see
  // libs/auth/src/api-keys/key-material.ts).
  { kind: 'switchboard-key', source: String.raw`sbk_[A-Za-z0-9_-]{43,}` },
  // A password in a URL (scheme://user:password@host): keeps scheme, user and host.
  {
    kind: 'url-password',
    source: String.raw`://[^\s:/?#@]*:(?<secret>[^\s/?#]+)(?=@)`,
  },
  // A secret setting written `<name> <value>`, which is only unambiguous after a CLI's setter
  // (`aws configure set aws_session_token …`, `npm config set //host/:_authToken …`, `yarn
  // config set npmAuthToken …`): a label and a space in prose ("password is required") is no
  // pair. The name must end with a secret word; flags before it may carry a value.
  {
    kind: 'config-set',
    source: String.raw`config(?:ure)?[ \t]+set${CONFIG_FLAGS}[ \t]+["']?(?=[^\s"'=-])\S*?(?:${SECRET_WORD}|${ci('auth')})["']?[ \t]+${FLAG_VALUE}`,
    command: true,
  },
  // dotnet's user-secrets store holds secrets only: every value set in it is one, whatever
  // its name (`dotnet user-secrets set "Movies:ServiceApiKey" "12345"`). A word starting with
  // '-' after the name is an option to dotnet too, not the value.
  {
    kind: 'config-set',
    source: String.raw`user-secrets[ \t]+set${USER_SECRETS_OPTIONS}[ \t]+(?!-)${WORD}[ \t]+(?!-)${FLAG_VALUE}`,
    command: true,
  },
  // A password in a short flag, only after the command whose flag it is (the same flag is a
  // port in ssh, docker run and redis-cli, a mode in mkdir): mysql and mariadb and their tools
  // with `-p<password>` attached (a separate word is the database), sshpass's and docker or
  // podman login's `-p`, redis-cli's `-a` and `--pass`, the `-p` of the mongo shells (mongosh,
  // mongo) and of MongoDB's database tools (mongodump, mongorestore …; their port is `--port`
  // only), not followed by an option: alone, it asks for the password. sshpass's `-p` is looked for
  // among its own options only: the command it runs follows them (`sshpass -f file ssh -p 22`).
  {
    kind: 'cli-password',
    source: String.raw`(?:(?:mysql(?:dump|admin|import|show|check|slap|pump)?|mariadb(?:-dump|-admin|-import|-show|-check|-slap)?)(?=[ \t])${COMMAND_GAP}[ \t]-p|sshpass${SSHPASS_OPTIONS}[ \t]+-p[ \t]*|(?:docker|podman)[ \t]+login(?=[ \t])${COMMAND_GAP}[ \t]-p[ \t]*|redis-cli(?=[ \t])${COMMAND_GAP}[ \t](?:-a|--pass)[ \t]+|mongo(?:sh|dump|restore|export|import|files|stat|top)?(?=[ \t])${COMMAND_GAP}[ \t]-p[ \t]*(?![\s-]))${FLAG_VALUE}`,
    command: true,
  },
  // A .netrc entry's password (curl, git, ftp and Python's netrc read them): after `machine
  // <host>`, or `default` and its login, and up to two `login`/`account` pairs, in any layout
  // of lines. A word after a `password` elsewhere is prose as often as not.
  {
    kind: 'netrc-password',
    source: String.raw`(?:machine${NETRC_GAP}[^\s"']\S*|default(?=${NETRC_GAP}login))(?:${NETRC_GAP}(?:login|account)${NETRC_GAP}\S+){0,2}${NETRC_GAP}password${NETRC_GAP}${FLAG_VALUE}`,
  },
  // A labelled secret in text: PGPASSWORD=…, password: …, "token":"…", ?access_token=…, secret => '…'.
  { kind: 'secret-param', source: String.raw`(?:${SECRET_WORD})${ASSIGN}${VALUE}` },
  // A command-line flag followed by its value: --password hunter2, --db-password "x", -token x.
  {
    kind: 'secret-flag',
    source: String.raw`-(?:${SECRET_WORD})[ \t]+["']?(?<secret>${PEM_PRIVATE_KEY}|(?<=")[^"\r\n]*|(?<=')[^'\r\n]*|[^\s"'-][^\s"']*)`,
  },
];

/**
 * The commands whose names the `command` patterns above follow to a secret in a later word
 * (cli-password, config-set): an argv array that names one is also read as the command line
 * it stands for (command-argv.ts). Keep in step with those patterns.
 */
export const COMMANDS_WITH_SECRET_ARGUMENTS: ReadonlySet<string> = new Set([
  'mysql',
  ...['dump', 'admin', 'import', 'show', 'check', 'slap', 'pump'].map((tool) => `mysql${tool}`),
  'mariadb',
  ...['dump', 'admin', 'import', 'show', 'check', 'slap'].map((tool) => `mariadb-${tool}`),
  'sshpass',
  'docker',
  'podman',
  'redis-cli',
  'mongosh',
  'mongo',
  ...['dump', 'restore', 'export', 'import', 'files', 'stat', 'top'].map((tool) => `mongo${tool}`),
  // Setters: `aws configure set`, `npm config set` and the like, `dotnet user-secrets set`.
  'aws',
  'npm',
  'yarn',
  'pnpm',
  'dotnet',
  'dotnet-user-secrets',
]);

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Whether a base64 token decodes to `user-id:password`: printable UTF-8 text with a ':'. */
function isBasicCredential(token: string): boolean {
  let text: string;
  try {
    text = STRICT_UTF8.decode(Buffer.from(token, 'base64'));
  } catch {
    return false;
  }
  // C0 and C1 controls and DEL: absent from any user-id or password a person types.
  return text.includes(':') && !/[\u0000-\u001f\u007f-\u009f]/.test(text);
}

/** The length of the shortest text a default value pattern can match (`pwd=x`). */
export const SHORTEST_DEFAULT_MATCH = 5;
