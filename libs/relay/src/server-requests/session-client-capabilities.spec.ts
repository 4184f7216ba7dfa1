import { describe, expect, it } from 'vitest';
import { sessionClientCapabilities } from './session-client-capabilities.js';

const derive = (host: Record<string, unknown>, pinnedRoots = false, inbox = false, protocolVersion = '2025-11-25') =>
  sessionClientCapabilities(host, { protocolVersion, pinnedRoots, inboxEnabled: () => inbox });

describe('sessionClientCapabilities', () => {
  it('declares nothing for a host that declared nothing', () => {
    expect(derive({})).toEqual({});
    expect(sessionClientCapabilities({}, { protocolVersion: '2025-11-25', pinnedRoots: false })).toEqual({});
  });

  it("declares only what the host's revision has: no elicitation before 2025-06-18, no url mode or sampling tools before 2025-11-25", () => {
    const all = { sampling: { tools: {} }, elicitation: { form: {}, url: {} }, roots: {} };
    expect(derive(all, false, false, '2025-03-26')).toEqual({ sampling: {}, roots: { listChanged: false } });
    expect(derive(all, false, false, '2025-06-18')).toEqual({ sampling: {}, elicitation: { form: {} }, roots: { listChanged: false } });
    expect(derive({ elicitation: { url: {} } }, false, false, '2025-06-18')).toEqual({});
    // The inbox takes what the host cannot, whatever its revision.
    expect(derive(all, false, true, '2025-03-26').elicitation).toEqual({ form: {}, url: {} });
  });

  it('declares sampling only if the host did, with tools only if it declared sampling.tools', () => {
    expect(derive({ sampling: {} })).toEqual({ sampling: {} });
    expect(derive({ sampling: { tools: {}, context: {} } })).toEqual({ sampling: { tools: {} } });
    expect(derive({ sampling: true })).toEqual({});
  });

  it.each([
    ['elicitation: {} (before modes) means form', { elicitation: {} }, { form: {} }],
    ['form only', { elicitation: { form: {} } }, { form: {} }],
    ['url only', { elicitation: { url: {} } }, { url: {} }],
    ['both', { elicitation: { form: {}, url: {} } }, { form: {}, url: {} }],
  ])('declares the elicitation modes the host did: %s', (_label, host, modes) => {
    expect(derive(host)).toEqual({ elicitation: modes });
  });

  it('declares both elicitation modes when the inbox can take what the host cannot', () => {
    expect(derive({}, false, true)).toEqual({ elicitation: { form: {}, url: {} } });
    expect(derive({ elicitation: { url: {} } }, false, true)).toEqual({ elicitation: { form: {}, url: {} } });
  });

  it("declares roots if the host did (as it announces changes), or if they are pinned", () => {
    expect(derive({ roots: {} })).toEqual({ roots: { listChanged: false } });
    expect(derive({ roots: { listChanged: true } })).toEqual({ roots: { listChanged: true } });
    expect(derive({}, true)).toEqual({ roots: { listChanged: true } });
    expect(derive({ roots: {} }, true)).toEqual({ roots: { listChanged: true } });
  });
});
