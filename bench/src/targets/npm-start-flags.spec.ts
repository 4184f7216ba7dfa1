import { describe, expect, it } from 'vitest';
import { nodeFlagsOf } from './npm-start-flags.js';

describe('nodeFlagsOf', () => {
  it('reads the node flags of the start script', () => {
    expect(nodeFlagsOf('node --max-semi-space-size=4 bin/switchboard.js start')).toEqual(['--max-semi-space-size=4']);
    expect(nodeFlagsOf('node bin/switchboard.js start')).toEqual([]);
    expect(nodeFlagsOf('node --a=1  --b bin/switchboard.js start')).toEqual(['--a=1', '--b']);
  });

  it('refuses a start script of another shape rather than guess', () => {
    expect(() => nodeFlagsOf('tsx apps/switchboard/src/cli.ts start')).toThrow(/start script/);
  });
});
