import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Node flags `npm start` gives the daemon, read from package.json's start script, so the
 * bench measures Switchboard exactly as the quick start runs it and the two cannot drift.
 */
export function npmStartNodeFlags(repoRoot: string): string[] {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  return nodeFlagsOf(manifest.scripts?.['start'] ?? '');
}

/** `node [--flag ...] bin/switchboard.js start` -> the flags; anything else is an error. */
export function nodeFlagsOf(script: string): string[] {
  const match = /^node((?:\s+--\S+)*)\s+bin\/switchboard\.js\s+start$/.exec(script.trim());
  if (!match) throw new Error(`package.json's start script is not "node [flags] bin/switchboard.js start": ${JSON.stringify(script)}`);
  return match[1]!.trim().split(/\s+/).filter(Boolean);
}
