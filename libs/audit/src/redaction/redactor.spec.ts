import { describe, expect, it } from 'vitest';
import { checkRedactionOptions, createRedactor } from './redactor.js';

const ALNUM = 'aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zCfLo';
const UPPER = 'QW3ERT7YU2IOP5ASDF9GHJ4KLZXC6VBN8M';

/**
 * A token-shaped value of `length` characters after `prefix`. Built at run time, so that
 * secret scanners see no credential-looking literal in this file.
 */
function fake(prefix: string, length: number, alphabet = ALNUM): string {
  let out = prefix;
  for (let i = 0; i < length; i++) out += alphabet[(i * 7 + prefix.length) % alphabet.length];
  return out;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const JWT = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: '42', name: 'Ada' })}.${fake('', 43)}`;
const PEM_BODY = `${fake('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 32)}\n${fake('', 64)}\n${fake('', 20)}==`;
const pem = (label: string) => `-----BEGIN ${label}-----\n${PEM_BODY}\n-----END ${label}-----`;

const redactor = createRedactor();

describe('redact: secret keys (defaults)', () => {
  const cases: [string, unknown][] = [
    ['password', 'hunter2'],
    ['passwd', 'hunter2'],
    ['pwd', 'Tr0ub4dor&3'],
    ['passphrase', 'correct horse battery staple'],
    ['pass', 'hunter2'],
    ['smtp_pass', 'hunter2'],
    ['DB_PASS', 'hunter2'],
    ['secret', 'shh'],
    ['client_secret', fake('', 40)],
    ['token', fake('', 32)],
    ['access_token', fake('ya29.', 60)],
    ['refresh_token', fake('1//', 50)],
    ['id_token', JWT],
    ['authToken', fake('', 24)],
    ['csrf-token', fake('', 24)],
    ['apiKey', fake('', 32)],
    ['api_key', fake('', 32)],
    ['x-api-key', fake('', 32)],
    ['API-KEY', fake('', 32)],
    ['aws_access_key_id', fake('AKIA', 16, UPPER)],
    ['AWS_SECRET_ACCESS_KEY', fake('', 40)],
    ['private_key', pem('PRIVATE KEY')],
    ['privateKey', pem('EC PRIVATE KEY')],
    ['authorization', `Bearer ${fake('', 32)}`],
    ['Proxy-Authorization', 'Basic dXNlcjpwYXNzd29yZA=='],
    ['auth', { username: 'ada', pass: 'x' }],
    ['cookie', 'sid=8f14e45f; theme=dark'],
    ['Set-Cookie', 'sid=8f14e45f; HttpOnly; Secure'],
    ['credentials', { user: 'ada', key: 'x' }],
    ['credential', 'x'],
    ['sessionid', '8f14e45fceea167a'],
    ['session_token', fake('', 40)],
    ['Mcp-Session-Id', '1868a90c-5e2b-4c0f-a0c2-0c3d6c1d1c7e'],
    ['connectionString', 'Server=db;Database=app;User Id=sa;Password=x'],
    ['signature', 'sha256=5d41402abc4b2a76b9719d911017c592'],
    ['X-Hub-Signature-256', 'sha256=5d41402abc4b2a76b9719d911017c592'],
  ];
  it.each(cases)('replaces the value under %s', (key, value) => {
    expect(redactor.redact({ [key]: value, other: 'kept' })).toEqual({ [key]: '[REDACTED]', other: 'kept' });
  });

  it.each([
    ['a number', 1234],
    ['an object', { nested: 'x' }],
    ['an array', ['a', 'b']],
    ['a boolean', true],
    ['null', null],
  ])('replaces %s wholesale', (_, value) => {
    expect(redactor.redact({ password: value })).toEqual({ password: '[REDACTED]' });
  });

  it('leaves an undefined member undefined instead of inventing a value', () => {
    expect(redactor.redact({ password: undefined, a: 1 })).toEqual({ password: undefined, a: 1 });
  });

  it('finds secret keys at any depth, in arrays too', () => {
    const args = { request: { headers: [{ name: 'x', Authorization: 'Bearer x' }] }, list: [{ token: 't' }] };
    expect(redactor.redact(args)).toEqual({
      request: { headers: [{ name: 'x', Authorization: '[REDACTED]' }] },
      list: [{ token: '[REDACTED]' }],
    });
  });
});

describe('redact: keys that only look like secrets', () => {
  it.each([
    ['max_tokens', 1024],
    ['maxTokens', 1024],
    ['token_count', 17],
    ['total_tokens', 300],
    ['tokens', 5],
    ['tokenizer', 'cl100k_base'],
    ['token_type', 'Bearer'],
    ['author', 'Ada Lovelace'],
    ['authority', 'login.example.com'],
    ['oauth', true],
    ['keyboard', 'qwerty'],
    ['monkey', 'George'],
    ['progressToken', 'progress-1'],
    ['pageToken', 'CAEQAA'],
    ['stopReason', 'maxTokens'],
    ['bypass', true],
    ['compass', 'north'],
    ['passes', 3],
    ['passed', true],
  ])('keeps %s', (key, value) => {
    const args = { [key]: value };
    expect(redactor.redact(args)).toBe(args);
  });

  it('keeps an MCP sampling request intact', () => {
    const params = {
      messages: [{ role: 'user', content: { type: 'text', text: 'Summarize the report' } }],
      maxTokens: 512,
      _meta: { progressToken: 7 },
    };
    expect(redactor.redact(params)).toBe(params);
  });
});

describe('redact: value patterns (defaults)', () => {
  const cases: [string, string, string][] = [
    [
      'an Authorization: Bearer header',
      `curl -H "Authorization: Bearer ${fake('', 32)}" https://api.example.com`,
      'curl -H "Authorization: Bearer [REDACTED:authorization]" https://api.example.com',
    ],
    [
      'an Authorization: Basic header',
      'Authorization: Basic dXNlcjpwYXNzd29yZA==',
      'Authorization: Basic [REDACTED:authorization]',
    ],
    [
      'a Proxy-Authorization header in JSON text',
      `{"Proxy-Authorization":"token ${fake('', 20)}"}`,
      '{"Proxy-Authorization":"token [REDACTED:authorization]"}',
    ],
    ['a Cookie header', 'Cookie: sid=8f14e45f; theme=dark', 'Cookie: [REDACTED:cookie]'],
    [
      'a bare Bearer token',
      `retrying with Bearer ${fake('', 32)}`,
      'retrying with Bearer [REDACTED:bearer-token]',
    ],
    ['a JWT', `verify ${JWT} please`, 'verify [REDACTED:jwt] please'],
    ['a PKCS#8 private key', `key:\n${pem('PRIVATE KEY')}\ndone`, 'key:\n[REDACTED:private-key]\ndone'],
    ['an RSA private key', `a ${pem('RSA PRIVATE KEY')} b`, 'a [REDACTED:private-key] b'],
    ['an EC private key', `a ${pem('EC PRIVATE KEY')} b`, 'a [REDACTED:private-key] b'],
    ['an OpenSSH private key', `a ${pem('OPENSSH PRIVATE KEY')} b`, 'a [REDACTED:private-key] b'],
    ['an encrypted private key', `a ${pem('ENCRYPTED PRIVATE KEY')} b`, 'a [REDACTED:private-key] b'],
    [
      'a truncated private key, through the end',
      `a -----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}`,
      'a [REDACTED:private-key]',
    ],
    [
      'an AWS access key id (AKIA)',
      `aws configure set aws_access_key_id ${fake('AKIA', 16, UPPER)}`,
      'aws configure set aws_access_key_id [REDACTED:aws-access-key-id]',
    ],
    ['an AWS temporary key id (ASIA)', `id ${fake('ASIA', 16, UPPER)} ok`, 'id [REDACTED:aws-access-key-id] ok'],
    [
      'a labelled AWS secret key',
      `export AWS_SECRET_ACCESS_KEY=${fake('', 36)}/+Ab`,
      'export AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]',
    ],
    [
      'an AWS secret key in a credentials file',
      `[default]\naws_secret_access_key = ${fake('', 40)}\nregion = eu-west-1`,
      '[default]\naws_secret_access_key = [REDACTED:aws-secret-key]\nregion = eu-west-1',
    ],
    [
      'a Google API key',
      `https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=${fake('AIza', 35)}`,
      'https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=[REDACTED:google-api-key]',
    ],
    ['a GitHub ghp_ token', `https://${fake('ghp_', 36)}@github.com/o/r.git`, 'https://[REDACTED:github-token]@github.com/o/r.git'],
    ['a GitHub gho_ token', `using ${fake('gho_', 36)} now`, 'using [REDACTED:github-token] now'],
    ['a GitHub ghu_ token', `using ${fake('ghu_', 36)} now`, 'using [REDACTED:github-token] now'],
    ['a GitHub ghs_ token', `using ${fake('ghs_', 36)} now`, 'using [REDACTED:github-token] now'],
    ['a GitHub ghr_ token', `using ${fake('ghr_', 36)} now`, 'using [REDACTED:github-token] now'],
    ['a GitHub fine-grained token', `using ${fake('github_pat_', 82)} now`, 'using [REDACTED:github-token] now'],
    ['a GitLab token', `using ${fake('glpat-', 20)} now`, 'using [REDACTED:gitlab-token] now'],
    ['a Slack bot token', `using ${fake('xoxb-', 50)} now`, 'using [REDACTED:slack-token] now'],
    ['a Slack user token', `using ${fake('xoxp-', 50)} now`, 'using [REDACTED:slack-token] now'],
    ['a Slack xoxa token', `using ${fake('xoxa-', 50)} now`, 'using [REDACTED:slack-token] now'],
    ['a Slack xoxr token', `using ${fake('xoxr-', 50)} now`, 'using [REDACTED:slack-token] now'],
    ['a Slack xoxs token', `using ${fake('xoxs-', 50)} now`, 'using [REDACTED:slack-token] now'],
    [
      'a Slack webhook URL',
      `post to https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/${fake('', 24)}`,
      'post to https://hooks.slack.com/services/[REDACTED:slack-webhook]',
    ],
    ['a Stripe live secret key', `using ${fake('sk_live_', 24)} now`, 'using [REDACTED:stripe-key] now'],
    ['a Stripe restricted key', `using ${fake('rk_live_', 24)} now`, 'using [REDACTED:stripe-key] now'],
    ['a Stripe test key', `using ${fake('sk_test_', 24)} now`, 'using [REDACTED:stripe-key] now'],
    ['an OpenAI legacy key', `using ${fake('sk-', 48)} now`, 'using [REDACTED:openai-key] now'],
    ['an OpenAI project key', `using ${fake('sk-proj-', 120, `${ALNUM}_-`)} now`, 'using [REDACTED:openai-key] now'],
    ['an Anthropic key', `using ${fake('sk-ant-api03-', 93, `${ALNUM}_-`)} now`, 'using [REDACTED:anthropic-key] now'],
    ['an npm token', `created ${fake('npm_', 36)}`, 'created [REDACTED:npm-token]'],
    ['a Switchboard API key', `key=1 ${fake('sbk_', 43, `${ALNUM}_-`)} used`, 'key=1 [REDACTED:switchboard-key] used'],
    [
      'a Slack app-level token',
      `using ${fake(`xapp-1-${fake('A0', 9, UPPER)}-${fake('', 13, '0123456789')}-`, 64, 'abcdef0123456789')} now`,
      'using [REDACTED:slack-token] now',
    ],
    ['a bare Basic credential', 'retrying with Basic dXNlcjpwYXNzd29yZA==', 'retrying with Basic [REDACTED:basic-credentials]'],
    [
      'a Basic credential in a header list',
      '[["Accept","*/*"],["Authorization","basic YWxpY2U6czNjcjN0LXBhc3N3b3Jk"]]',
      '[["Accept","*/*"],["Authorization","basic [REDACTED:basic-credentials]"]]',
    ],
    [
      'an Azure storage AccountKey',
      `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${fake('', 86)}==;EndpointSuffix=core.windows.net`,
      'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:azure-key];EndpointSuffix=core.windows.net',
    ],
    [
      'a password in a database URL',
      'psql postgres://admin:s3cr3t@db.internal:5432/app',
      'psql postgres://admin:[REDACTED:url-password]@db.internal:5432/app',
    ],
    ['a URL password without a user', 'redis://:p4ss@cache:6379/0', 'redis://:[REDACTED:url-password]@cache:6379/0'],
    ['a URL password containing @', 'https://ada:p@ss@example.com/x', 'https://ada:[REDACTED:url-password]@example.com/x'],
    ['an env assignment', 'PGPASSWORD=hunter2 psql -h db', 'PGPASSWORD=[REDACTED:secret-param] psql -h db'],
    ['a secret= pair', 'client_id=app&client_secret=abc123&grant_type=x', 'client_id=app&client_secret=[REDACTED:secret-param]&grant_type=x'],
    ['a token in a query string', '/cb?access_token=abc123&page=2', '/cb?access_token=[REDACTED:secret-param]&page=2'],
    [
      'a password in JSON text',
      '{"user":"ada","password":"hunter two"}',
      '{"user":"ada","password":"[REDACTED:secret-param]"}',
    ],
    [
      'a password in JSON text inside JSON text',
      String.raw`{\"password\":\"hunter2\"}`,
      String.raw`{\"password\":\"[REDACTED:secret-param]\"}`,
    ],
    ['a password in SQL', "UPDATE u SET password = 'x1' WHERE id = 1", "UPDATE u SET password = '[REDACTED:secret-param]' WHERE id = 1"],
    ['a YAML secret', 'db:\n  password: hunter2\n  host: db', 'db:\n  password: [REDACTED:secret-param]\n  host: db'],
    ['a Django SECRET_KEY', "SECRET_KEY = 'django-insecure-x'", "SECRET_KEY = '[REDACTED:secret-param]'"],
    ['an .npmrc auth token', `//registry.npmjs.org/:_authToken=${fake('npm_', 36)}`, '//registry.npmjs.org/:_authToken=[REDACTED:secret-param]'],
    ['a --password flag', 'pg_dump --password hunter2 --host db', 'pg_dump --password [REDACTED:secret-flag] --host db'],
    ['a quoted --db-password flag', 'run --db-password "two words" -v', 'run --db-password "[REDACTED:secret-flag]" -v'],
    ['a --token= flag', 'gh --token=abc123 repo list', 'gh --token=[REDACTED:secret-param] repo list'],
    [
      'an AWS secret key after its label and a space',
      `printf '%s\\n' aws_secret_access_key ${fake('', 36)}/+Ab >> creds`,
      "printf '%s\\n' aws_secret_access_key [REDACTED:aws-secret-key] >> creds",
    ],
    [
      'an AWS secret key set by aws configure',
      `aws configure set aws_secret_access_key ${fake('', 36)}/+Ab`,
      'aws configure set aws_secret_access_key [REDACTED:config-set]',
    ],
    [
      'an AWS session token set by aws configure, for a profile',
      `aws configure set --profile dev aws_session_token ${fake('FwoGZXIvYXdz', 80)} && aws s3 ls`,
      'aws configure set --profile dev aws_session_token [REDACTED:config-set] && aws s3 ls',
    ],
    [
      'a dotted AWS profile setting',
      'aws configure set profile.ci.aws_secret_access_key short-but-secret',
      'aws configure set profile.ci.aws_secret_access_key [REDACTED:config-set]',
    ],
    [
      'a registry auth token set by npm config',
      'npm config set --location=project //npm.example.com/:_authToken Zm9vYmFy',
      'npm config set --location=project //npm.example.com/:_authToken [REDACTED:config-set]',
    ],
    ['an npm _auth set by npm config', 'npm config set //npm.example.com/:_auth dXNlcjpwdw==', 'npm config set //npm.example.com/:_auth [REDACTED:config-set]'],
    ['a token set by yarn config', 'yarn config set npmAuthToken "abc 123"', 'yarn config set npmAuthToken "[REDACTED:config-set]"'],
    ['a mysql -p password', 'mysql -u root -pS3cr3tPass', 'mysql -u root -p[REDACTED:cli-password]'],
    ['a mysqldump -p password', 'mysqldump -uroot -pS3cr3t app > dump.sql', 'mysqldump -uroot -p[REDACTED:cli-password] app > dump.sql'],
    ['a quoted mariadb -p password', "mariadb -h db -P 3306 -u app -p'two words' app", "mariadb -h db -P 3306 -u app -p'[REDACTED:cli-password]' app"],
    ['a mysql password after its path', '/usr/bin/mysql --host=db -pS3cr3t -e "select 1"', '/usr/bin/mysql --host=db -p[REDACTED:cli-password] -e "select 1"'],
    ['an sshpass -p password', 'sshpass -p Hunter2Hunter2 ssh -p 22 ada@host', 'sshpass -p [REDACTED:cli-password] ssh -p 22 ada@host'],
    ['an attached sshpass -p password', 'sshpass -pHunter2 scp f host:', 'sshpass -p[REDACTED:cli-password] scp f host:'],
    ['a docker login -p password', 'docker login -u me -p DockerPw123 registry.example.com', 'docker login -u me -p [REDACTED:cli-password] registry.example.com'],
    ['a podman login -p password', 'podman login quay.io -u me -p PodmanPw1', 'podman login quay.io -u me -p [REDACTED:cli-password]'],
    ['a docker login --password', 'docker login -u me --password DockerPw123', 'docker login -u me --password [REDACTED:secret-flag]'],
    ['a redis-cli -a password', 'redis-cli -h cache -p 6379 -a RedisPw123 ping', 'redis-cli -h cache -p 6379 -a [REDACTED:cli-password] ping'],
    ['a redis-cli --pass password', 'redis-cli --pass RedisPw123 --no-auth-warning', 'redis-cli --pass [REDACTED:cli-password] --no-auth-warning'],
    ['a mongosh -p password', 'mongosh -u admin -p MongoPw123 mongodb://db:27017/app', 'mongosh -u admin -p [REDACTED:cli-password] mongodb://db:27017/app'],
    ['a mongosh --password', 'mongosh "mongodb://db/app" -u admin --password MongoPw123', 'mongosh "mongodb://db/app" -u admin --password [REDACTED:secret-flag]'],
    ['a mongo -p password', 'mongo --host db -u admin -p MongoPw123 admin', 'mongo --host db -u admin -p [REDACTED:cli-password] admin'],
    // MongoDB's database tools take the password as the shells do: `-p` (or `--password`), never the port.
    ['a mongodump -p password', 'mongodump --uri mongodb://db/app -u admin -p MongoPw123 --out /tmp/x', 'mongodump --uri mongodb://db/app -u admin -p [REDACTED:cli-password] --out /tmp/x'],
    ['a mongorestore -p password', 'mongorestore -u admin -pMongoPw123 /tmp/x', 'mongorestore -u admin -p[REDACTED:cli-password] /tmp/x'],
    ['a mongoexport -p password', 'mongoexport --db app -c users -u admin -p MongoPw123', 'mongoexport --db app -c users -u admin -p [REDACTED:cli-password]'],
    ['a mongoimport -p password', 'mongoimport -u admin -p MongoPw123 --file users.json', 'mongoimport -u admin -p [REDACTED:cli-password] --file users.json'],
    ['a mongofiles -p password', 'mongofiles -u admin -p MongoPw123 list', 'mongofiles -u admin -p [REDACTED:cli-password] list'],
    ['a mongostat -p password', 'mongostat -u admin -p MongoPw123 5', 'mongostat -u admin -p [REDACTED:cli-password] 5'],
    ['a mongotop -p password', 'mongotop -u admin -p MongoPw123 10', 'mongotop -u admin -p [REDACTED:cli-password] 10'],
    ['an sshpass -p after -P', 'sshpass -P "Enter passphrase" -p S3cr3t ssh -p 22 host', 'sshpass -P "Enter passphrase" -p [REDACTED:cli-password] ssh -p 22 host'],
    ['an sshpass -p after -v and a bare -P', 'sshpass -v -P assphrase -p S3cr3t scp f host:', 'sshpass -v -P assphrase -p [REDACTED:cli-password] scp f host:'],
    ['a .netrc line', 'machine api.example.com login me password S3cr3t', 'machine api.example.com login me password [REDACTED:netrc-password]'],
    [
      'a multi-line .netrc',
      'machine git.example.com\n  login me\n  password S3cr3t\n\nmachine ftp.example.com password Other1 login you\ndefault login anonymous password ada@example.com\n',
      'machine git.example.com\n  login me\n  password [REDACTED:netrc-password]\n\nmachine ftp.example.com password [REDACTED:netrc-password] login you\ndefault login anonymous password [REDACTED:netrc-password]\n',
    ],
    [
      'a dotnet user secret',
      'dotnet user-secrets set "Movies:ServiceApiKey" "12345"',
      'dotnet user-secrets set "Movies:ServiceApiKey" "[REDACTED:config-set]"',
    ],
    [
      'a dotnet user secret after the tool\'s flags',
      'dotnet user-secrets set --project src/Web -v Db:Host db.internal && dotnet run',
      'dotnet user-secrets set --project src/Web -v Db:Host [REDACTED:config-set] && dotnet run',
    ],
  ];
  it.each(cases)('replaces %s', (_, text, expected) => {
    expect(redactor.redactText(text)).toBe(expected);
    expect(redactor.redact({ query: text })).toEqual({ query: expected });
  });

  it.each([
    ['counters in text', 'max_tokens=100, token_count: 12, tokens: 5'],
    ['an author line', 'the author: Ada, authority: x'],
    ['a URL with a port', 'see http://example.com:8080/docs or mail ada@example.com'],
    ['kebab-case words', 'desk-lamp-assembly-instructions-v2 and task-force-2024-summary-draft'],
    ['prose about bearer tokens', 'the bearer token was rejected'],
    ['a secretary', 'secretary: Jane'],
    ['a password file setting', 'PASSWORD_FILE=/run/secrets/db'],
    ['npm config', 'npm_config_registry=https://registry.example.com'],
    ['a certificate', `-----BEGIN CERTIFICATE-----\n${PEM_BODY}\n-----END CERTIFICATE-----`],
    ['short prefixes', 'ghp_abc sk-abc AKIA123 xoxb-1 xapp-1-A0 sbk_abc'],
    ['prose about basic credentials', 'Basic information: basic authentication, Basic realm="api", basic troubleshooting'],
    ['a base64 word after Basic that is no user:password', `Basic ${Buffer.from('no colon in here').toString('base64')}`],
    ['percent signs', '100% done, 50%off, %zz, a %E2%82%AC sign, %41%4B%49%41 short'],
    ['a published port', 'docker run -p 8080:80 -d nginx'],
    ['an ssh port', 'ssh -p 22 ada@host'],
    ['mkdir -p', 'mkdir -p dir/sub && cd dir'],
    ['a mysql port, and -p asking for the password', 'mysql -P 3306 -h db -u root -p app'],
    ['a mysql -p at the end of the line', 'mysql -u root -p\nls -pla'],
    ['a -p flag of the next command', 'mysql -u root app < q.sql; ls -pla && docker run -p 80:80 img | redis-cli -p 6379'],
    ['docker login reading stdin', 'docker login -u me --password-stdin < pw.txt && docker push -q img'],
    ['redis-cli -p', 'redis-cli -h cache -p 6379 ping'],
    ['a mongosh port, and -p asking for the password', 'mongosh --port 27017 -u admin -p --authenticationDatabase admin'],
    ['a mongodump port, and -p asking for the password', 'mongodump --port 27017 -u admin -p --out /tmp/x'],
    ['sshpass reading a file', 'sshpass -P assphrase -f pw.txt ssh -p 22 host'],
    ['prose about a machine', 'the machine learning team; the login page; password is required'],
    ['other dotnet user-secrets commands', 'dotnet user-secrets list --project src/Web; dotnet user-secrets remove "Db:Host"'],
    ['harmless settings', 'aws configure set region eu-west-1; git config set user.name Ada; npm config set max_tokens 5'],
    ['a label and a word in prose', 'set the aws_session_token when you use temporary credentials; password is required'],
    ['the auth:missing message', 'Unauthorized: a credential is required: an API key or token, sent as a Bearer token in the Authorization header or in X-API-Key'],
  ])('keeps %s', (_, text) => {
    expect(redactor.redactText(text)).toBe(text);
  });

  it('hides a fixed-length key whole when more of its characters follow, not leaving the tail', () => {
    const tail = (text: string) => redactor.redactText(text);
    expect(tail(`AWS_SECRET_ACCESS_KEY=${fake('', 40)}XYZ`)).toBe('AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]');
    expect(tail(`id ${fake('AKIA', 16, UPPER)}LEAKTAIL done`)).toBe('id [REDACTED:aws-access-key-id] done');
    expect(tail(`key=${fake('AIza', 35)}Tail`)).toBe('key=[REDACTED:google-api-key]');
    expect(tail(`created ${fake('npm_', 36)}Tail.`)).toBe('created [REDACTED:npm-token].');
  });

  it('scans object keys too: a map keyed by tokens keeps its values, not its keys', () => {
    const first = fake('ghp_', 36);
    const second = fake('ghp_', 40);
    const args = { tokens: { [first]: 'repo-a', [second]: 'repo-b' }, plain: { owner: 'ada' } };
    const out = redactor.redact(args) as { tokens: Record<string, string>; plain: unknown };
    expect(out.tokens).toEqual({ '[REDACTED:github-token]': 'repo-a', '[REDACTED:github-token]#2': 'repo-b' });
    expect(out.plain).toBe(args.plain);
    // A redacted key never overwrites a real one of the same spelling.
    const clash = redactor.redact({ '[REDACTED:github-token]': 1, [first]: 2 });
    expect(clash).toEqual({ '[REDACTED:github-token]': 1, '[REDACTED:github-token]#2': 2 });
  });

  it('scans strings under any key, nested', () => {
    const args = { sql: { query: 'connect postgres://u:pw@h/db' }, argv: ['mysql', '--password', 'x', '--password hunter2'] };
    expect(redactor.redact(args)).toEqual({
      sql: { query: 'connect postgres://u:[REDACTED:url-password]@h/db' },
      argv: ['mysql', '--password', '[REDACTED]', '--password [REDACTED:secret-flag]'],
    });
  });

  it('redacts the value after a secret flag in an argv array, and only there', () => {
    const args = { args: ['--db-password', 'x', '--api-key', 'k', '--max-tokens', '100', '--token', '--verbose', 'file'] };
    expect(redactor.redact(args)).toEqual({
      args: ['--db-password', '[REDACTED]', '--api-key', '[REDACTED]', '--max-tokens', '100', '--token', '--verbose', 'file'],
    });
  });

  it('hides the whole body of a private key that follows a label, not only its BEGIN line', () => {
    const key = `${pem('PRIVATE KEY')}\n`;
    const serviceAccount = JSON.stringify({ type: 'service_account', private_key_id: 'k1', private_key: key, client_email: 'sa@p.example' });
    const body = (text: string) => PEM_BODY.split('\n').filter((line) => text.includes(line));
    // As a file tool's content (JSON text), as JSON inside JSON, as HCL and as a flag.
    const texts = [
      serviceAccount,
      JSON.stringify({ content: serviceAccount }),
      `private_key = "${pem('RSA PRIVATE KEY')}"`,
      `ssh-add --private-key "${pem('OPENSSH PRIVATE KEY')}" -v`,
    ];
    for (const text of texts) {
      const out = redactor.redactText(text);
      expect(body(out), out).toEqual([]);
      expect(out).not.toContain('-----END');
    }
    expect(JSON.parse(redactor.redactText(serviceAccount))).toEqual({
      type: 'service_account',
      private_key_id: 'k1',
      private_key: '[REDACTED:secret-param]\n',
      client_email: 'sa@p.example',
    });
    const args = { path: '/srv/sa.json', content: serviceAccount };
    expect(body(JSON.stringify(redactor.redact(args)))).toEqual([]);
  });

  it('is idempotent', () => {
    const text = `Authorization: Bearer ${fake('', 20)} postgres://a:b@h password="x" ${JWT} Cookie: a=b`;
    const once = redactor.redactText(text);
    expect(redactor.redactText(once)).toBe(once);
  });

  it('stays linear on 100 KB adversarial strings', () => {
    const size = 100_000;
    const fill = (unit: string) => unit.repeat(Math.ceil(size / unit.length));
    const inputs = [
      fill('eyJ'),
      fill('eyJaaaaaaaa.'),
      `password${' '.repeat(size)}`,
      fill('password '),
      fill('-----BEGIN PRIVATE KEY-----'),
      `-----BEGIN ${'A'.repeat(size)}`,
      fill('-----END RSA PRIVATE KEY-----'),
      fill('a://a:'),
      `x://${fill('u:')}`,
      `Authorization: ${'a'.repeat(size)}`,
      fill('Bearer '),
      fill('sk-'),
      fill('ghp_'),
      fill('"password":"'),
      fill('"private_key":"-----BEGIN PRIVATE KEY-----'),
      fill('--private-key -----BEGIN PRIVATE KEY-----'),
      fill('--token '),
      fill('aws_secret_access_key='),
      fill('Basic '),
      `Basic ${'A'.repeat(size)}`,
      fill('Basic YWxpY2U6cHc= '),
      fill('xapp-1-'),
      fill('sbk_'),
      fill('%41'),
      fill('%E2%82'),
      fill('%F0%9F%98%80password%3D'),
      `Bearer%20${'a'.repeat(size)}`,
      fill('aws_secret_access_key '),
      `aws_secret_access_key${' '.repeat(size)}`,
      fill('config set '),
      fill('config set -a '),
      fill('configure set -a b '),
      `config set ${'a'.repeat(size)}`,
      `config set ${fill('--a b ')}`,
      `config set${fill(' --aconfig set')}`,
      `mysql -u${fill('-')}`,
      `config set ${fill('token')}`,
      fill('mysql '),
      fill('mysql -p '),
      `mysql ${' '.repeat(size)}`,
      fill('sshpass -x '),
      `sshpass${fill(' -xsshpass')}`,
      fill('docker login '),
      fill('redis-cli -a'),
      fill('mongosh -p '),
      `sshpass${fill(' -P sshpass')}`,
      fill('sshpass -P "'),
      fill('machine x login x '),
      `machine x${fill(' login machine')}`,
      fill('user-secrets set '),
      `user-secrets set${fill(' -a user-secrets set')}`,
    ];
    for (const input of inputs) {
      const started = performance.now();
      redactor.redactText(input);
      expect(performance.now() - started, input.slice(0, 30)).toBeLessThan(1000);
    }
  });
});

describe('redact: a command given as an argv array', () => {
  // Each item alone does not show the command its flag belongs to: the array is read as one line.
  it.each([
    [['mysql', '-u', 'root', '-pS3cr3t'], ['mysql', '-u', 'root', '-p[REDACTED:cli-password]']],
    [['/usr/bin/mysqldump', '-uroot', '-pS3cr3t', 'app'], ['/usr/bin/mysqldump', '-uroot', '-p[REDACTED:cli-password]', 'app']],
    [['sshpass', '-p', 'X', 'ssh', 'host'], ['sshpass', '-p', '[REDACTED:cli-password]', 'ssh', 'host']],
    [
      ['sshpass', '-P', 'Enter passphrase', '-p', 'two words', 'ssh', '-p', '22', 'host'],
      ['sshpass', '-P', 'Enter passphrase', '-p', '[REDACTED:cli-password]', 'ssh', '-p', '22', 'host'],
    ],
    [['docker', 'login', '-u', 'me', '-p', 'X'], ['docker', 'login', '-u', 'me', '-p', '[REDACTED:cli-password]']],
    [['redis-cli', '-a', 'X'], ['redis-cli', '-a', '[REDACTED:cli-password]']],
    [['mongosh', '-u', 'admin', '-p', 'X', 'mongodb://db/app'], ['mongosh', '-u', 'admin', '-p', '[REDACTED:cli-password]', 'mongodb://db/app']],
    [['mongodump', '-u', 'admin', '-p', 'X', '--out', '/tmp/x'], ['mongodump', '-u', 'admin', '-p', '[REDACTED:cli-password]', '--out', '/tmp/x']],
    [['/usr/bin/mongorestore', '-u', 'admin', '-pX'], ['/usr/bin/mongorestore', '-u', 'admin', '-p[REDACTED:cli-password]']],
    [
      ['aws', 'configure', 'set', 'aws_secret_access_key', 'KEY'],
      ['aws', 'configure', 'set', 'aws_secret_access_key', '[REDACTED:config-set]'],
    ],
    [
      ['dotnet', 'user-secrets', 'set', 'Movies:ServiceApiKey', '12345'],
      ['dotnet', 'user-secrets', 'set', 'Movies:ServiceApiKey', '[REDACTED:config-set]'],
    ],
    [
      ['C:\\Program Files\\dotnet\\dotnet.exe', 'user-secrets', 'set', 'Db:Password', 'two words'],
      ['C:\\Program Files\\dotnet\\dotnet.exe', 'user-secrets', 'set', 'Db:Password', '[REDACTED:config-set]'],
    ],
    // The command need not come first (sudo, docker exec, kubectl exec --), and an item's ';' is its own.
    [['sudo', 'docker', 'exec', 'db', 'mysql', '-e', 'select 1;', '-pS3cr3t'], ['sudo', 'docker', 'exec', 'db', 'mysql', '-e', 'select 1;', '-p[REDACTED:cli-password]']],
    [['kubectl', 'exec', 'cache-0', '--', 'redis-cli', '-a', 'X', 'ping'], ['kubectl', 'exec', 'cache-0', '--', 'redis-cli', '-a', '[REDACTED:cli-password]', 'ping']],
    // A number keeps its place; found secret, it becomes the marker (as a secret key's value does).
    [['sshpass', '-p', 123456, 'ssh', '-p', 22, 'host'], ['sshpass', '-p', '[REDACTED:cli-password]', 'ssh', '-p', 22, 'host']],
    // A boolean, a null or an object among the items is a word of its own and keeps its place.
    [['mysql', '-u', 'root', '-pS3cr3t', '--connect-timeout', 5, '--compress', true], ['mysql', '-u', 'root', '-p[REDACTED:cli-password]', '--connect-timeout', 5, '--compress', true]],
    [['mysql', null, '-pS3cr3t', { note: 'x' }], ['mysql', null, '-p[REDACTED:cli-password]', { note: 'x' }]],
    [['sshpass', '-p', false, 'ssh', 'host'], ['sshpass', '-p', false, 'ssh', 'host']],
    [['redis-cli', '-a', ['not', 'a', 'word'], 'ping'], ['redis-cli', '-a', ['not', 'a', 'word'], 'ping']],
    // What an item holds on its own is still found, next to what the line shows.
    [['mysql', '--password', 'x', '-pS3cr3t', 'Bearer abcdefgh1234 ok'], ['mysql', '--password', '[REDACTED]', '-p[REDACTED:cli-password]', 'Bearer [REDACTED:bearer-token] ok']],
  ])('redacts %j', (command, expected) => {
    expect(redactor.redact({ command })).toEqual({ command: expected });
    expect(redactor.redact(command)).toEqual(expected);
  });

  it.each([
    [['ssh', '-p', '22', 'host']],
    [['docker', 'run', '-p', '8080:80', 'nginx']],
    [['mkdir', '-p', 'x']],
    [['mysql', '-P', '3306', '-u', 'root', '-p', 'app']],
    [['redis-cli', '-p', '6379', 'ping']],
    [['mongosh', '--port', '27017']],
    [['sshpass', '-f', 'pw.txt', 'ssh', '-p', '22', 'host']],
    [['tags', 'docker', 'redis-cli', '-p']],
  ])('keeps %j', (command) => {
    const args = { command };
    expect(redactor.redact(args)).toBe(args);
  });

  it('reads no line with defaults: false', () => {
    const args = { command: ['mysql', '-pS3cr3t'] };
    expect(createRedactor({ defaults: false, patterns: ['nothing-[0-9]+'] }).redact(args)).toBe(args);
  });

  describe('your own commands and patterns', () => {
    const keyAfterFlag = '(?<=--key )\\S+';

    it('reads the argv array of a command named in commands as its line, with your patterns too', () => {
      const mine = createRedactor({ patterns: [keyAfterFlag], commands: ['acme-run'] });
      expect(mine.redact({ command: ['acme-run', '--key', 'K3yValue99', 'deploy'] })).toEqual({ command: ['acme-run', '--key', '[REDACTED:custom]', 'deploy'] });
      expect(mine.redact(['/opt/acme/bin/acme-run', '--key', 'K3yValue99'])).toEqual(['/opt/acme/bin/acme-run', '--key', '[REDACTED:custom]']);
      // The defaults still read their own commands' lines, yours too.
      expect(mine.redact(['mysql', '-pS3cr3t', '--key', 'K3yValue99'])).toEqual(['mysql', '-p[REDACTED:cli-password]', '--key', '[REDACTED:custom]']);
    });

    it('leaves an array that names none of the commands to your patterns item by item', () => {
      const args = { command: ['acme-run', '--key', 'K3yValue99'] };
      expect(createRedactor({ patterns: [keyAfterFlag] }).redact(args)).toBe(args);
      expect(createRedactor({ patterns: [keyAfterFlag], commands: ['other'] }).redact(args)).toBe(args);
    });

    it('reads your commands with defaults: false, with your patterns only', () => {
      const mine = createRedactor({ defaults: false, patterns: [keyAfterFlag], commands: ['acme-run'] });
      expect(mine.redact(['acme-run', '-pS3cr3t', '--key', 'K3yValue99'])).toEqual(['acme-run', '-pS3cr3t', '--key', '[REDACTED:custom]']);
    });

    it('hides a match that overlaps a default one once, in its place', () => {
      const mine = createRedactor({ patterns: ['(?<=-p)\\S+'], commands: ['acme-run'] });
      expect(mine.redact(['mysql', '-u', 'root', '-pS3cr3t'])).toEqual(['mysql', '-u', 'root', '-p[REDACTED:cli-password]']);
    });
  });

  it('stays linear on a long argv array', () => {
    const command = ['mysql', ...Array.from({ length: 50_000 }, (_, i) => (i % 2 === 0 ? '-p' : 'mysql'))];
    const started = performance.now();
    redactor.redact({ command });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('redact: name/value pairs', () => {
  it('redacts the value of {name, value} and {key, value} pairs named like a secret (HAR, Kubernetes, tags)', () => {
    const args = {
      har: [
        { name: 'Accept', value: 'application/json' },
        { name: 'Authorization', value: 'Basic YWxpY2U6aHVudGVyMg==' },
      ],
      env: [
        { name: 'DB_HOST', value: 'db' },
        { name: 'DB_PASSWORD', value: 'hunter2' },
        { name: 'DB_PASSWORD_FILE', valueFrom: { configMapKeyRef: { name: 'db', key: 'path' } } },
      ],
      params: [{ key: 'api_key', value: 'k' }],
      tags: [{ Key: 'session-token', Value: 42 }],
    };
    expect(redactor.redact(args)).toEqual({
      har: [
        { name: 'Accept', value: 'application/json' },
        { name: 'Authorization', value: '[REDACTED]' },
      ],
      env: [
        { name: 'DB_HOST', value: 'db' },
        { name: 'DB_PASSWORD', value: '[REDACTED]' },
        { name: 'DB_PASSWORD_FILE', valueFrom: { configMapKeyRef: { name: 'db', key: 'path' } } },
      ],
      params: [{ key: 'api_key', value: '[REDACTED]' }],
      tags: [{ Key: 'session-token', Value: '[REDACTED]' }],
    });
  });

  it('redacts a completion/complete argument named like a secret', () => {
    expect(redactor.redact({ argument: { name: 'password', value: 'hunter2' }, context: { arguments: { user: 'ada' } } })).toEqual({
      argument: { name: 'password', value: '[REDACTED]' },
      context: { arguments: { user: 'ada' } },
    });
  });

  it('redacts the second item of a two-item array whose first is a secret name', () => {
    const args = {
      headerPairs: [
        ['Accept', 'text/plain'],
        ['Authorization', 'Token abc'],
        ['X-Api-Key', { nested: 'k' }],
      ],
      entries: [['client_secret', 'shh']],
    };
    expect(redactor.redact(args)).toEqual({
      headerPairs: [
        ['Accept', 'text/plain'],
        ['Authorization', '[REDACTED]'],
        ['X-Api-Key', '[REDACTED]'],
      ],
      entries: [['client_secret', '[REDACTED]']],
    });
  });

  it('keeps pairs with innocent names, longer arrays, and names that are prose', () => {
    const args = {
      pairs: [['max_tokens', 100], ['name', 'value']],
      list: ['password', 'x', 'y'],
      flags: { name: 'token_count', value: 3 },
      long: { name: `a field that is ${'very '.repeat(30)}long and mentions a password`, value: 'v' },
      noValue: { name: 'password', hint: 'at least 12 characters' },
    };
    expect(redactor.redact(args)).toBe(args);
  });

  it('leaves an undefined pair value undefined', () => {
    expect(redactor.redact({ p: ['token', undefined], o: { name: 'token', value: undefined } })).toEqual({
      p: ['token', undefined],
      o: { name: 'token', value: undefined },
    });
  });

  it('applies the configured keys to pair names too', () => {
    const r = createRedactor({ defaults: false, keys: ['pin'] });
    expect(r.redact([{ name: 'PIN', value: '1234' }, ['pin', '1234'], { name: 'password', value: 'p' }])).toEqual([
      { name: 'PIN', value: '[REDACTED]' },
      ['pin', '[REDACTED]'],
      { name: 'password', value: 'p' },
    ]);
  });
});

describe('redactText: percent-encoded text (resource URIs)', () => {
  const pct = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');

  it.each([
    ['a secret query parameter', 'probe://readme?access_token=TokValue', 'probe://readme?access_token=[REDACTED:secret-param]'],
    [
      'an encoded Bearer token',
      `probe://t/${encodeURIComponent(`Bearer ${fake('', 24)}`)}`,
      'probe://t/Bearer%20[REDACTED:bearer-token]',
    ],
    [
      'an encoded Authorization header',
      `probe://t?h=${encodeURIComponent('Authorization: Basic dXNlcjpwYXNzd29yZA==')}`,
      'probe://t?h=Authorization%3A%20Basic%20[REDACTED:authorization]',
    ],
    [
      'an encoded bare Basic credential',
      `probe://t/${encodeURIComponent('Basic dXNlcjpwYXNzd29yZA==')}`,
      'probe://t/Basic%20[REDACTED:basic-credentials]',
    ],
    ['a fully encoded GitHub token', `probe://t/${pct(fake('ghp_', 36))}/x`, 'probe://t/[REDACTED:github-token]/x'],
    ['a fully encoded AWS key id', `probe://t/${pct(fake('AKIA', 16, UPPER))}`, 'probe://t/[REDACTED:aws-access-key-id]'],
    ['an encoded JWT', `probe://t/${JWT.slice(0, 10)}${pct(JWT.slice(10, 14))}${JWT.slice(14)}`, 'probe://t/[REDACTED:jwt]'],
    [
      'a token in an encoded nested URL',
      `probe://x?next=${encodeURIComponent('https://api/cb?token=abc&page=2')}`,
      'probe://x?next=https%3A%2F%2Fapi%2Fcb%3Ftoken%3D[REDACTED:secret-param]%26page%3D2',
    ],
    [
      'a secret around multi-byte characters',
      `probe://x/${encodeURIComponent('€ password=hünter2 😀 ok')}`,
      'probe://x/%E2%82%AC%20password%3D[REDACTED:secret-param]%20%F0%9F%98%80%20ok',
    ],
    [
      'a secret next to invalid UTF-8',
      'probe://x/password%3Dab%FFcd%20next',
      'probe://x/password%3D[REDACTED:secret-param]%20next',
    ],
  ])('replaces %s', (_, text, expected) => {
    expect(redactor.redactText(text)).toBe(expected);
    expect(redactor.redactText(expected)).toBe(expected);
  });

  it('keeps a URI with escapes and no secret as it is', () => {
    const uri = 'file:///docs/My%20Report%20%E2%82%AC.md?page=2&q=a%2Bb';
    expect(redactor.redactText(uri)).toBe(uri);
  });

  it('applies custom patterns to the decoded text too', () => {
    const r = createRedactor({ defaults: false, patterns: ['ACME [0-9]{6}'] });
    expect(r.redactText('probe://x/ACME%20123456/y')).toBe('probe://x/[REDACTED:custom]/y');
    expect(r.redactText('ACME 123456 and ACME%20654321')).toBe('[REDACTED:custom] and [REDACTED:custom]');
  });
});

describe('redact: structure', () => {
  it('returns the input itself when nothing is secret', () => {
    const args = { path: '/tmp/x', recursive: true, depth: 3, tags: ['a', 'b'], nested: { q: 'hello world' } };
    expect(redactor.redact(args)).toBe(args);
    expect(redactor.redactText('hello world')).toBe('hello world');
  });

  it('never mutates the input', () => {
    const args = deepFreeze({ user: 'ada', password: 'x', list: [{ token: 't' }, 'Bearer abcdefgh1234'] });
    const before = JSON.stringify(args);
    const result = redactor.redact(args);
    expect(JSON.stringify(args)).toBe(before);
    expect(result).not.toBe(args);
    expect(result).toEqual({ user: 'ada', password: '[REDACTED]', list: [{ token: '[REDACTED]' }, 'Bearer [REDACTED:bearer-token]'] });
  });

  it('replaces a cycle with [Circular] and terminates', () => {
    const node: Record<string, unknown> = { name: 'root' };
    node.self = node;
    node.children = [node, { parent: node }];
    expect(redactor.redact(node)).toEqual({
      name: 'root',
      self: '[Circular]',
      children: ['[Circular]', { parent: '[Circular]' }],
    });
  });

  it('redacts a shared, non-cyclic branch wherever it appears, not as a cycle', () => {
    const shared = { password: 'x' };
    expect(redactor.redact({ a: shared, b: shared })).toEqual({ a: { password: '[REDACTED]' }, b: { password: '[REDACTED]' } });
  });

  it('passes non-JSON values through without throwing', () => {
    const fn = () => 1;
    const sym = Symbol('s');
    for (const value of [undefined, fn, 10n, sym, Number.NaN]) expect(redactor.redact(value)).toBe(value);
    const args = { a: undefined, f: fn, n: 10n, s: sym, token: 10n, list: [undefined, fn] };
    expect(redactor.redact(args)).toEqual({ a: undefined, f: fn, n: 10n, s: sym, token: '[REDACTED]', list: [undefined, fn] });
  });

  it('keeps a __proto__ key as an own member', () => {
    const args = JSON.parse('{"__proto__":{"x":1},"password":"p"}') as Record<string, unknown>;
    const result = redactor.redact(args) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toEqual(['__proto__', 'password']);
    expect(JSON.stringify(result)).toBe('{"__proto__":{"x":1},"password":"[REDACTED]"}');
  });

  it('cuts nesting deeper than 1000 levels', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 5000; i++) deep = [deep];
    expect(JSON.stringify(redactor.redact(deep))).toContain('"[Truncated]"');
  });
});

describe('createRedactor options', () => {
  it('adds keys: contained after normalization, or /regex/flags on the raw key', () => {
    const r = createRedactor({ keys: ['tenant_id', '/^x-internal-/i'] });
    expect(r.redact({ TenantId: 'a', 'x-tenant-id': 'b', 'X-Internal-Trace': 'c', internal: 'd', password: 'e' })).toEqual({
      TenantId: '[REDACTED]',
      'x-tenant-id': '[REDACTED]',
      'X-Internal-Trace': '[REDACTED]',
      internal: 'd',
      password: '[REDACTED]',
    });
  });

  it('adds value patterns, case-insensitive when written /src/i', () => {
    const r = createRedactor({ patterns: ['ACME-[0-9]{6}', '/internal-[a-z]+/i'] });
    expect(r.redactText('ids ACME-123456, acme-123456, INTERNAL-Zone')).toBe(
      'ids [REDACTED:custom], acme-123456, [REDACTED:custom]',
    );
    expect(r.redact({ note: 'ACME-000001' })).toEqual({ note: '[REDACTED:custom]' });
    expect(r.redactText('AB')).toBe('AB');
  });

  it('with defaults: false, applies only the given keys and patterns', () => {
    const r = createRedactor({ defaults: false, keys: ['pin'], patterns: ['X-[0-9]+'] });
    const args = { password: 'p', pin: '1234', text: 'X-42 postgres://u:pw@h' };
    expect(r.redact(args)).toEqual({ password: 'p', pin: '[REDACTED]', text: '[REDACTED:custom] postgres://u:pw@h' });
    const none = createRedactor({ defaults: false });
    expect(none.redact(args)).toBe(args);
  });

  it('keeps key decisions right past the key cache size', () => {
    const args: Record<string, string> = {};
    for (let i = 0; i < 5000; i++) args[`field${i}`] = 'v';
    args.password = 'x';
    const result = redactor.redact(args) as Record<string, string>;
    expect(result.password).toBe('[REDACTED]');
    expect(result.field4999).toBe('v');
  });
});

describe('checkRedactionOptions', () => {
  it('accepts valid options', () => {
    expect(checkRedactionOptions({})).toEqual([]);
    expect(checkRedactionOptions({ keys: ['tenant', '/^x-/i'], patterns: ['ACME-\\d+', '/acme/i'] })).toEqual([]);
  });

  it('lists every invalid regex and unusable entry', () => {
    const problems = checkRedactionOptions({ keys: ['/(/', '--', 'ok'], patterns: ['[', '/x/q', 'a*', '/a/y', 'fine'] });
    expect(problems).toHaveLength(6);
    expect(problems[0]).toContain('/(/');
    expect(problems.join('\n')).toContain('matches the empty string');
  });

  it('lists a command that is empty, holds a blank or is a path', () => {
    expect(checkRedactionOptions({ commands: ['acme-run', 'vault.exe'] })).toEqual([]);
    expect(checkRedactionOptions({ commands: ['', 'acme run', '/usr/bin/acme', 'ok'] })).toEqual([
      'redaction command "": must be a command\'s name, without blanks or a path (acme-run, not /usr/bin/acme-run)',
      'redaction command "acme run": must be a command\'s name, without blanks or a path (acme-run, not /usr/bin/acme-run)',
      'redaction command "/usr/bin/acme": must be a command\'s name, without blanks or a path (acme-run, not /usr/bin/acme-run)',
    ]);
  });

  it('makes createRedactor throw with the same problems', () => {
    expect(() => createRedactor({ patterns: ['(', ')'] })).toThrow(/invalid redaction options: .*\(.*; .*\)/);
  });
});

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
