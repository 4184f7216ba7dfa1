// Preloaded into the daemon by scripts/soak/soak.mjs and churn.mjs (node --expose-gc -r): on
// SIGUSR2 it runs full collections and writes the heap, the open handles and how many Maps,
// Sets, Promises and AbortControllers are alive to $SOAK_PROBE_OUT, so that rounds of churn
// are compared on what survives a GC, not on what is merely not yet collected; a count that
// grows round after round points at a store the heap's noise hides.
'use strict';
const { writeFileSync } = require('node:fs');
const v8 = require('node:v8');

process.on('SIGUSR2', () => {
  for (let i = 0; i < 3; i++) globalThis.gc();
  const { heapUsed, rss } = process.memoryUsage();
  const handles = {};
  for (const kind of process.getActiveResourcesInfo()) handles[kind] = (handles[kind] ?? 0) + 1;
  // v8.queryObjects: Node 20.13 and later (experimental; it warns once on stderr).
  const objects = {};
  if (v8.queryObjects) for (const type of [Map, Set, Promise, AbortController]) objects[type.name] = v8.queryObjects(type, { format: 'count' });
  writeFileSync(process.env.SOAK_PROBE_OUT, JSON.stringify({ heapUsed, rss, handles, objects }));
});
