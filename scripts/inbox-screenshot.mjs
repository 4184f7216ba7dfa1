// Rewrites docs/images/inbox.png, the README's picture of the inbox page.
//
//   node scripts/inbox-screenshot.mjs [output.png]
//
// Builds the project, then runs the browser test (test/inbox-browser.e2e-spec.ts) with
// INBOX_SCREENSHOT set: its step with one pending form elicitation and one pending approval
// saves a full-page screenshot. `npm test` runs the same test without it, so it never
// rewrites the tracked image. Needs Debian's chromium, like the test.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const output = process.argv[2] ?? 'docs/images/inbox.png';

function run(args, env = {}) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run(['node_modules/typescript/bin/tsc', '-b']);
run(['node_modules/vitest/vitest.mjs', 'run', 'test/inbox-browser.e2e-spec.ts'], { INBOX_SCREENSHOT: output });
console.log(`wrote ${output}`);
