import { callerKey } from '@switchboard/core';
import type { ServerRequest, UpstreamConnection } from '@switchboard/upstream';
import { describe, expect, it } from 'vitest';
import type { RelayServices } from '../relay.types.js';
import { SessionDirectory, type DownstreamSession } from '../session.js';
import { ServerRequestRelay } from './server-request-relay.js';
import { MAX_ELICITATION_ID_CHARS } from './url-elicitations.js';
import { TaskRelay } from '../tasks/task-relay.js';

type Item = Record<string, unknown>;

/**
 * Relays one request from the upstream 'notes', caused by a host that declared form and url
 * elicitation, sampling and roots (on `protocolVersion`), and that answers with `answer`;
 * returns the upstream's result and what the host was sent.
 */
async function relayed(
  method: string,
  params: Item,
  answer: Item = { action: 'decline' },
  protocolVersion = '2025-11-25',
  /** The relay of tasks and the connection the request comes on, and what else the host declared. */
  more: { tasks?: TaskRelay; connection?: UpstreamConnection; capabilities?: Item } = {},
): Promise<{ result: Item; sent: Item[] }> {
  const sent: Item[] = [];
  const session = {
    id: 's',
    protocolVersion,
    principal: { id: 'alice', authMethod: 'api-key' },
    clientCapabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {}, ...more.capabilities },
    clientInfo: { name: 'host', version: '1' },
    initialized: true,
    request: async (_method: string, outgoing: Item) => {
      sent.push(outgoing);
      return answer;
    },
  } as unknown as DownstreamSession;
  const sessions = new SessionDirectory();
  sessions.add(session);
  const services = { sessions, policy: { decide: () => ({ allowed: true, rule: 'allowed' }) }, tasks: more.tasks } as unknown as RelayServices;
  const relay = new ServerRequestRelay(services, () => ({ timeoutMs: 1000, maxSamplingTokens: 100, inbox: false }));
  const result = await relay.handle({
    connection: more.connection ?? ({ name: 'notes' } as UpstreamConnection),
    request: { jsonrpc: '2.0', id: 7, method, params },
    signal: new AbortController().signal,
    related: true,
    candidates: [{ session, requestId: 1 }],
    attribute: () => undefined,
  } as ServerRequest);
  return { result, sent };
}

const schema = { type: 'object', properties: { name: { type: 'string' } } };

describe('elicitation modes', () => {
  it('refuses a url-mode elicitation whose id is over the length limit before any host sees it, and relays one at the limit', async () => {
    const asked = (elicitationId: string) => ({ mode: 'url', message: 'm', url: 'https://x.test/', elicitationId });
    const sent: Item[] = [];
    const error = await relayed('elicitation/create', asked('e'.repeat(MAX_ELICITATION_ID_CHARS + 1))).then(
      (r) => void sent.push(...r.sent),
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: -32602, message: `A url-mode elicitation's elicitationId is over ${MAX_ELICITATION_ID_CHARS} characters` });
    expect(sent).toEqual([]);
    const longest = await relayed('elicitation/create', asked('e'.repeat(MAX_ELICITATION_ID_CHARS)));
    expect(longest.sent).toEqual([asked('e'.repeat(MAX_ELICITATION_ID_CHARS))]);
  });

  it.each(['bogus', 'URL', 'Form', 5])('refuses mode %j with -32602 naming the field, before any host sees it', async (mode) => {
    const sent: Item[] = [];
    const error = await relayed('elicitation/create', { mode, message: 'm', requestedSchema: schema }).then(
      (r) => void sent.push(...r.sent),
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: -32602, message: expect.stringContaining("mode must be 'form' or 'url'") });
    expect(sent).toEqual([]);
  });

  it('relays form (named or absent) and url mode', async () => {
    for (const params of [{ message: 'm', requestedSchema: schema }, { mode: 'form', message: 'm', requestedSchema: schema }, { mode: 'url', message: 'm', url: 'https://x.test/', elicitationId: 'e1' }]) {
      expect((await relayed('elicitation/create', params)).sent).toEqual([params]);
    }
  });
});

describe("hosts' answers", () => {
  it('reach the upstream only when the request allows them; otherwise the upstream gets -32603 with the problems', async () => {
    const asked = { mode: 'form', message: 'm', requestedSchema: { type: 'object', properties: { n: { type: 'integer', maximum: 10 } } } };
    expect((await relayed('elicitation/create', asked, { action: 'accept', content: { n: 3 } })).result).toEqual({ action: 'accept', content: { n: 3 } });
    for (const [method, params, answer, problem] of [
      ['elicitation/create', asked, { action: 'bogus' }, 'action must be one of accept, decline, cancel'],
      ['elicitation/create', asked, { action: 'accept', content: { n: 11, more: { x: 1 } } }, 'content: more is not a field of this form; content: n must be at most 10'],
      ['elicitation/create', { mode: 'url', message: 'm', url: 'https://x.test/', elicitationId: 'e1' }, { action: 'accept', content: { n: 1 } }, 'a url-mode elicitation is accepted without content'],
      ['roots/list', {}, { roots: [{ uri: 'http://not-file' }, 5] }, 'roots[0].uri must be a file:// URI; roots[1] must be an object with a uri'],
      ['sampling/createMessage', { messages: [{ role: 'user', content: { type: 'text', text: 'x' } }], maxTokens: 5 }, { foo: 1 }, 'role must be user or assistant'],
    ] as const) {
      await expect(relayed(method, params, answer), JSON.stringify(answer)).rejects.toMatchObject({
        code: -32603,
        message: expect.stringContaining(`The host's answer to ${method} is invalid: ${problem}`),
      });
    }
  });
});

describe("the host's revision", () => {
  const form = { mode: 'form', message: 'm', requestedSchema: { type: 'object', properties: { n: { type: 'integer', maximum: 10, default: 5 } } } };

  it('2025-06-18: the form goes without what that revision lacks, and the answer is checked against the form the upstream asked', async () => {
    const { result, sent } = await relayed('elicitation/create', form, { action: 'accept', content: { n: 3 } }, '2025-06-18');
    expect(sent).toEqual([{ message: 'm', requestedSchema: { type: 'object', properties: { n: { type: 'integer', maximum: 10 } } } }]);
    expect(result).toEqual({ action: 'accept', content: { n: 3 } });
    await expect(relayed('elicitation/create', form, { action: 'accept', content: { n: 11 } }, '2025-06-18')).rejects.toMatchObject({ code: -32603 });
  });

  it('is not asked what its revision lacks, whatever it declared: -32602 names the revision and what it has not', async () => {
    for (const [version, params, lacking] of [
      ['2025-03-26', form, 'elicitation/create'],
      ['2024-11-05', form, 'elicitation/create'],
      ['2025-06-18', { mode: 'url', message: 'm', url: 'https://x.test/', elicitationId: 'e1' }, 'url-mode elicitation'],
    ] as const) {
      const sent: Item[] = [];
      const error = await relayed('elicitation/create', params, undefined, version).then((r) => void sent.push(...r.sent), (e: unknown) => e);
      expect(error).toMatchObject({ code: -32602, message: `The host that caused this request speaks MCP ${version}, which has no ${lacking}` });
      expect(sent).toEqual([]);
    }
  });
});

describe('questions about a task (2025-11-25 related-task)', () => {
  const RELATED = 'io.modelcontextprotocol/related-task';
  const form = { message: 'Which colour?', requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } } };
  const about = (taskId: string) => ({ ...form, _meta: { [RELATED]: { taskId }, other: 1 } });

  /** A relay of tasks holding alice's task 'up-a' and bob's 'up-b', both on `connection`. */
  function tasksOn(connection: UpstreamConnection) {
    const tasks = new TaskRelay(new SessionDirectory());
    const task = (principal: string, upstreamTaskId: string) =>
      tasks.book.add({ principal, upstream: 'notes', via: connection, upstreamTaskId, tool: 'notes__ask', originalName: 'ask', status: 'input_required', ttlMs: 60_000 });
    const keyOf = (id: string) => callerKey({ id, authMethod: 'api-key' });
    return { tasks, alices: task(keyOf('alice'), 'up-a'), bobs: task(keyOf('bob'), 'up-b') };
  }

  it("reach a host that speaks tasks under the gateway's id of its principal's task, and the answer the upstream under its own", async () => {
    const connection = { name: 'notes' } as UpstreamConnection;
    const { tasks, alices } = tasksOn(connection);
    const echoed = { action: 'accept', content: { colour: 'teal' }, _meta: { [RELATED]: { taskId: alices.id } } };
    const { sent, result } = await relayed('elicitation/create', about('up-a'), echoed, '2025-11-25', { tasks, connection, capabilities: { tasks: {} } });
    expect(sent).toEqual([{ ...form, _meta: { [RELATED]: { taskId: alices.id }, other: 1 } }]);
    expect(result).toEqual({ action: 'accept', content: { colour: 'teal' }, _meta: { [RELATED]: { taskId: 'up-a' } } });
  });

  it("go without any task id to a host that does not speak tasks, and for a task that is not its principal's or not the gateway's", async () => {
    const connection = { name: 'notes' } as UpstreamConnection;
    const { tasks } = tasksOn(connection);
    const plain = { ...form, _meta: { other: 1 } };
    const cases: [string, Item, string][] = [
      ['up-a', {}, 'a host that declared no tasks'],
      ['up-b', { tasks: {} }, "another principal's task"],
      ['up-unknown', { tasks: {} }, 'a task the gateway ran for a host that never saw it'],
    ];
    for (const [taskId, capabilities, why] of cases) {
      const { sent, result } = await relayed('elicitation/create', about(taskId), { action: 'decline' }, '2025-11-25', { tasks, connection, capabilities });
      expect(sent, why).toEqual([plain]);
      // The upstream still hears the answer is about its task.
      expect(result, why).toEqual({ action: 'decline', _meta: { [RELATED]: { taskId } } });
    }
    // On another connection the same upstream id is another task.
    const elsewhere = await relayed('elicitation/create', about('up-a'), undefined, '2025-11-25', { tasks, capabilities: { tasks: {} } });
    expect(elsewhere.sent).toEqual([plain]);
  });

  it('relate no answer to a task its request did not name, whatever the host put there', async () => {
    const { result } = await relayed('elicitation/create', form, { action: 'decline', _meta: { [RELATED]: { taskId: 'guessed' }, kept: true } });
    expect(result).toEqual({ action: 'decline', _meta: { kept: true } });
  });
});
