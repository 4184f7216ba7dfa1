import { createRequire } from 'node:module';

// Read from the root package.json (three levels up from both src/ and dist/), so there is
// one place to bump.
const require = createRequire(import.meta.url);
export const SWITCHBOARD_VERSION: string = (require('../../../package.json') as { version: string }).version;
