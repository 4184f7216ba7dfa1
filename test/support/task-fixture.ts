import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './daemon.js';

/** A config entry running the task fixture (test/fixtures/task-upstream.mjs), which logs what it does to `events`. */
export function taskUpstream(events: string): { command: string; args: string[]; env: Record<string, string> } {
  return { command: process.execPath, args: [join(REPO_ROOT, 'test/fixtures/task-upstream.mjs')], env: { TASK_EVENTS: events } };
}

/** The lines the task fixture logged so far ('pid N', 'created <tool> <id>', 'cancelled <id>', ...). */
export const eventsOf = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
