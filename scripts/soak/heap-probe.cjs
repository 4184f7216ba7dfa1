// Preloaded into the daemon by scripts/soak/soak.mjs (node --expose-gc -r): on SIGUSR2 it
// runs full collections and writes the heap and the open handles to $SOAK_PROBE_OUT, so that
// rounds of churn are compared on what survives a GC, not on what is merely not yet collected.
'use strict';
const { writeFileSync } = require('node:fs');

process.on('SIGUSR2', () => {
  for (let i = 0; i < 3; i++) globalThis.gc();
  const { heapUsed, rss } = process.memoryUsage();
  const handles = {};
  for (const kind of process.getActiveResourcesInfo()) handles[kind] = (handles[kind] ?? 0) + 1;
  writeFileSync(process.env.SOAK_PROBE_OUT, JSON.stringify({ heapUsed, rss, handles }));
});
