import { describe, expect, it } from 'vitest';
import { sessionClientCapabilities } from './session-client-capabilities.js';

const derive = (host: Record<string, unknown>, pinnedRoots = false, inbox = false) =>
  sessionClientCapabilities(host, { pinnedRoots, inboxEnabled: () => inbox });

describe('sessionClientCapabilities', () => {
  it('declares nothing for a host that declared nothing', () => {
    expect(derive({})).toEqual({});
    expect(sessionClientCapabilities({}, { pinnedRoots: false })).toEqual({});
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
