#!/usr/bin/env node
// The `switchboard` command. The TypeScript sources are built by `npm run build` (npm start
// does it first); this file only hands over to the compiled CLI.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../apps/switchboard/dist/cli.js', import.meta.url);
let main;
try {
  ({ main } = await import(cli.href));
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  // A fresh clone (or one whose build or install was not finished) would otherwise show
  // Node's stack trace; say in one line what to run instead. npm ci does not build.
  const root = fileURLToPath(new URL('..', import.meta.url));
  const why = existsSync(cli) ? String(err.message).split('\n')[0] : 'it is not built yet';
  process.stderr.write(`switchboard: ${why}; run \`npm ci\` and then \`npm run build\` in ${root}\n`);
  process.exit(1);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`switchboard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
