import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import libs from source; the daemon started by e2e tests runs from dist/.
const libs = readdirSync(new URL('./libs', import.meta.url));
const alias = [
  ...libs.map((name) => ({
    find: `@switchboard/${name}`,
    replacement: fileURLToPath(new URL(`./libs/${name}/src/index.ts`, import.meta.url)),
  })),
  { find: '@switchboard/migrations', replacement: fileURLToPath(new URL('./migrations/index.ts', import.meta.url)) },
];

export default defineConfig({
  resolve: { alias },
  test: {
    // One temp root per run, removed at its end (test/support/temp-root.ts).
    globalSetup: ['./test/support/temp-root.ts'],
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts', 'bench/src/**/*.spec.ts', 'migrations/**/*.spec.ts'],
          testTimeout: 10_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'e2e',
          include: ['test/**/*.e2e-spec.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Each e2e file starts its own daemons and upstream children; two cores.
          maxWorkers: 2,
          // After the unit tests: a broken basic piece is then reported by the cheap tier first.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
