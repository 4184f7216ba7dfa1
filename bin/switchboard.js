#!/usr/bin/env node
// The `switchboard` command. The TypeScript sources are built by `npm run build` (npm start
// does it first); this file only hands over to the compiled CLI.
import { main } from '../apps/switchboard/dist/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`switchboard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
