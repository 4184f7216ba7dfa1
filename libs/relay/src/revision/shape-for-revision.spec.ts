import { encodeMessage, type JsonRpcMessage } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { shapeNotification, shapeResult } from './shape-for-revision.js';

type Item = Record<string, unknown>;

const ICONS = [{ src: 'https://example.com/i.png', mimeType: 'image/png' }];
const META = { 'example.com/vendor': { keep: true } };

/** A tool carrying every optional field of 2025-11-25, and a vendor field no revision defines. */
const fullTool = (): Item => ({
  name: 'fx__add',
  title: 'Add',
  description: 'Adds',
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object', properties: { sum: { type: 'number' } } },
  annotations: { readOnlyHint: true },
  icons: ICONS,
  execution: { taskSupport: 'optional' },
  _meta: META,
  'x-vendor': 1,
});

const keysOf = (item: unknown) => Object.keys(item as Item).sort();

describe('shapeResult: the newest revision and unknown ones get the very same object', () => {
  for (const version of ['2025-11-25', '2026-07-28', '']) {
    it(`${version || 'no version yet'}`, () => {
      for (const [method, result] of [
        ['tools/list', { tools: [fullTool()] }],
        ['tools/call', { content: [{ type: 'audio', data: 'AA==', mimeType: 'audio/wav' }], structuredContent: { a: 1 } }],
        ['initialize', { protocolVersion: version, capabilities: { completions: {} }, serverInfo: { name: 's', version: '1', title: 'S' } }],
      ] as const) {
        expect(shapeResult(method, result as Item, version)).toBe(result);
      }
    });
  }

  it('older revisions get the same object too when nothing needs shaping', () => {
    const call = { content: [{ type: 'text', text: 'hi' }] };
    const list = { tools: [{ name: 't', description: 'd', inputSchema: { type: 'object' } }] };
    expect(shapeResult('tools/call', call, '2024-11-05')).toBe(call);
    expect(shapeResult('tools/list', list, '2024-11-05')).toBe(list);
    expect(shapeResult('resources/read', { contents: [{ uri: 'a://b', text: 'x' }] }, '2024-11-05')).toEqual({ contents: [{ uri: 'a://b', text: 'x' }] });
  });
});

describe('shapeResult: tools/list', () => {
  it('2024-11-05: a tool is name, description and inputSchema (plus _meta and vendor fields)', () => {
    const input = { tools: [fullTool()], nextCursor: 'c' };
    const before = JSON.stringify(input);
    const out = shapeResult('tools/list', input, '2024-11-05');
    expect(keysOf((out.tools as Item[])[0])).toEqual(['_meta', 'description', 'inputSchema', 'name', 'x-vendor']);
    expect((out.tools as Item[])[0]._meta).toBe(META);
    expect(out.nextCursor).toBe('c');
    // The input (a cached page every host shares) is untouched.
    expect(JSON.stringify(input)).toBe(before);
  });

  it('2025-03-26 keeps annotations; 2025-06-18 keeps title and outputSchema; neither gets icons or execution', () => {
    const v0326 = (shapeResult('tools/list', { tools: [fullTool()] }, '2025-03-26').tools as Item[])[0];
    expect(keysOf(v0326)).toEqual(['_meta', 'annotations', 'description', 'inputSchema', 'name', 'x-vendor']);
    const v0618 = (shapeResult('tools/list', { tools: [fullTool()] }, '2025-06-18').tools as Item[])[0];
    expect(keysOf(v0618)).toEqual(['_meta', 'annotations', 'description', 'inputSchema', 'name', 'outputSchema', 'title', 'x-vendor']);
  });

  it("2025-03-26: a tool's title becomes its annotations' title, that revision's display name, unless it has one", () => {
    const v0326 = (shapeResult('tools/list', { tools: [fullTool()] }, '2025-03-26').tools as Item[])[0];
    expect(v0326.annotations).toEqual({ readOnlyHint: true, title: 'Add' });
    const own = { ...fullTool(), annotations: { title: 'Adder' } };
    expect((shapeResult('tools/list', { tools: [own] }, '2025-03-26').tools as Item[])[0].annotations).toEqual({ title: 'Adder' });
    const bare = { name: 't', title: 'T', inputSchema: { type: 'object' } };
    expect((shapeResult('tools/list', { tools: [bare] }, '2025-03-26').tools as Item[])[0]).toEqual({ name: 't', inputSchema: { type: 'object' }, annotations: { title: 'T' } });
    // 2024-11-05 has no annotations to carry it; 2025-06-18 has the title itself.
    expect((shapeResult('tools/list', { tools: [bare] }, '2024-11-05').tools as Item[])[0]).toEqual({ name: 't', inputSchema: { type: 'object' } });
    expect((shapeResult('tools/list', { tools: [fullTool()] }, '2025-06-18').tools as Item[])[0].annotations).toEqual({ readOnlyHint: true });
  });

  it('a list page is shaped once per revision and its JSON text remembered', () => {
    const page = { tools: [fullTool()] };
    const first = shapeResult('tools/list', page, '2024-11-05');
    expect(first).not.toBe(page);
    expect(shapeResult('tools/list', page, '2024-11-05')).toBe(first);
    expect(shapeResult('tools/list', page, '2025-03-26')).not.toBe(first);
    expect(encodeMessage({ jsonrpc: '2.0', id: 1, result: first })).toBe(JSON.stringify({ jsonrpc: '2.0', id: 1, result: first }));
  });
});

describe('shapeResult: prompts, resources, templates', () => {
  it('prompts and their arguments lose title and icons before 2025-06-18', () => {
    const prompts = [{ name: 'p', title: 'P', icons: ICONS, arguments: [{ name: 'a', title: 'A', required: true }] }];
    expect(shapeResult('prompts/list', { prompts }, '2025-03-26')).toEqual({ prompts: [{ name: 'p', arguments: [{ name: 'a', required: true }] }] });
    expect(shapeResult('prompts/list', { prompts }, '2025-06-18')).toEqual({
      prompts: [{ name: 'p', title: 'P', arguments: [{ name: 'a', title: 'A', required: true }] }],
    });
  });

  it('resources and templates keep size and annotations, lose title, icons and annotations.lastModified as needed', () => {
    const annotations = { audience: ['user'], priority: 0.5, lastModified: '2025-01-12T15:00:58Z' };
    const resources = [{ uri: 'a://r', name: 'r', title: 'R', size: 3, icons: ICONS, annotations }];
    expect(shapeResult('resources/list', { resources }, '2024-11-05')).toEqual({
      resources: [{ uri: 'a://r', name: 'r', size: 3, annotations: { audience: ['user'], priority: 0.5 } }],
    });
    expect(shapeResult('resources/list', { resources }, '2025-06-18')).toEqual({
      resources: [{ uri: 'a://r', name: 'r', title: 'R', size: 3, annotations }],
    });
    const resourceTemplates = [{ uriTemplate: 'a://{x}', name: 't', title: 'T', icons: ICONS }];
    expect(shapeResult('resources/templates/list', { resourceTemplates }, '2025-03-26')).toEqual({
      resourceTemplates: [{ uriTemplate: 'a://{x}', name: 't' }],
    });
  });

  it('prompts/get: message content blocks are downgraded like tool content', () => {
    const result = { messages: [{ role: 'user', content: { type: 'audio', data: 'AA==', mimeType: 'audio/wav' } }] };
    const out = shapeResult('prompts/get', result, '2024-11-05');
    expect(out.messages).toEqual([{ role: 'user', content: { type: 'text', text: expect.stringContaining('audio/wav') } }]);
    expect(shapeResult('prompts/get', result, '2025-03-26')).toBe(result);
  });
});

describe('shapeResult: initialize', () => {
  const result = {
    protocolVersion: '2024-11-05',
    capabilities: { tools: { listChanged: true }, logging: {}, completions: {}, tasks: {}, experimental: { x: {} } },
    serverInfo: { name: 'switchboard', version: '1', title: 'Switchboard', icons: ICONS, description: 'd', websiteUrl: 'https://x' },
    instructions: 'hi',
  };

  it('2024-11-05: no completions capability, no title or other newer implementation fields', () => {
    expect(shapeResult('initialize', result, '2024-11-05')).toEqual({
      protocolVersion: '2024-11-05',
      capabilities: { tools: { listChanged: true }, logging: {}, experimental: { x: {} } },
      serverInfo: { name: 'switchboard', version: '1' },
      instructions: 'hi',
    });
  });

  it('2025-03-26 keeps completions; 2025-06-18 keeps the title', () => {
    const v0326 = shapeResult('initialize', result, '2025-03-26');
    expect(v0326.capabilities).toEqual({ tools: { listChanged: true }, logging: {}, completions: {}, experimental: { x: {} } });
    expect(v0326.serverInfo).toEqual({ name: 'switchboard', version: '1' });
    expect(shapeResult('initialize', result, '2025-06-18').serverInfo).toEqual({ name: 'switchboard', version: '1', title: 'Switchboard' });
  });
});

describe('shapeResult: tools/call content', () => {
  const link = { type: 'resource_link', uri: 'fixture://hello', name: 'hello', mimeType: 'text/plain', description: 'A greeting' };
  const audio = { type: 'audio', data: 'AA==', mimeType: 'audio/wav', annotations: { priority: 1, lastModified: '2025-01-01T00:00:00Z' } };
  const image = { type: 'image', data: 'AA==', mimeType: 'image/png' };

  it('2024-11-05: audio and resource_link become text blocks that say what they were', () => {
    const out = shapeResult('tools/call', { content: [image, audio, link] }, '2024-11-05');
    const [img, aud, lnk] = out.content as Item[];
    expect(img).toBe(image);
    expect(aud).toEqual({ type: 'text', text: expect.stringMatching(/audio.*audio\/wav.*omitted/), annotations: { priority: 1 } });
    expect(lnk).toEqual({ type: 'text', text: expect.stringMatching(/hello.*fixture:\/\/hello/) });
  });

  it('2025-03-26 keeps audio but not resource_link; 2025-06-18 keeps both', () => {
    const out = shapeResult('tools/call', { content: [audio, link] }, '2025-03-26');
    expect((out.content as Item[]).map((b) => b.type)).toEqual(['audio', 'text']);
    expect((out.content as Item[])[0]).toEqual({ ...audio, annotations: { priority: 1 } });
    const plain = { content: [{ ...audio, annotations: { priority: 1 } }, link] };
    expect(shapeResult('tools/call', plain, '2025-06-18')).toBe(plain);
  });

  it("2025-06-18: a resource_link is a resource as that revision has it: no icons (2025-11-25), its title and _meta kept", () => {
    const full = { ...link, title: 'Hello', icons: ICONS, annotations: { lastModified: '2025-01-01T00:00:00Z' }, _meta: META };
    const result = { content: [full] };
    const [shaped] = shapeResult('tools/call', result, '2025-06-18').content as Item[];
    expect(shaped).toEqual({ ...link, title: 'Hello', annotations: { lastModified: '2025-01-01T00:00:00Z' }, _meta: META });
    const prompt = { messages: [{ role: 'user', content: full }] };
    expect((shapeResult('prompts/get', prompt, '2025-06-18').messages as Item[])[0].content).toEqual(shaped);
    expect(shapeResult('tools/call', result, '2025-11-25')).toBe(result);
  });

  it('keeps a block the older revision has, with its _meta, and the result _meta', () => {
    const result = { content: [{ type: 'text', text: 'x', _meta: META }], _meta: META, isError: true };
    expect(shapeResult('tools/call', result, '2024-11-05')).toBe(result);
  });

  it('structuredContent before 2025-06-18: dropped; a text block carries its JSON when none did', () => {
    const bare = shapeResult('tools/call', { content: [], structuredContent: { sum: 42 } }, '2025-03-26');
    expect(bare).toEqual({ content: [{ type: 'text', text: '{"sum":42}' }] });

    const carried = { content: [{ type: 'text', text: '{\n  "sum": 42\n}' }], structuredContent: { sum: 42 } };
    expect(shapeResult('tools/call', carried, '2024-11-05')).toEqual({ content: carried.content });

    const other = { content: [{ type: 'text', text: 'The sum is 42' }], structuredContent: { sum: 42 } };
    expect(shapeResult('tools/call', other, '2024-11-05')).toEqual({
      content: [{ type: 'text', text: 'The sum is 42' }, { type: 'text', text: '{"sum":42}' }],
    });
    expect(shapeResult('tools/call', other, '2025-06-18')).toBe(other);
  });
});

describe('shapeNotification', () => {
  const progress: JsonRpcMessage = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 2, total: 3, message: 'm' } };

  it('2024-11-05: progress has no message', () => {
    expect(shapeNotification(progress, '2024-11-05')).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 1, progress: 2, total: 3 },
    });
    expect((progress as { params: Item }).params.message).toBe('m');
  });

  it('later revisions, other notifications and requests pass as the same object', () => {
    expect(shapeNotification(progress, '2025-03-26')).toBe(progress);
    expect(shapeNotification(progress, '2025-11-25')).toBe(progress);
    const log: JsonRpcMessage = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } };
    expect(shapeNotification(log, '2024-11-05')).toBe(log);
    const request: JsonRpcMessage = { jsonrpc: '2.0', id: 1, method: 'notifications/progress', params: { message: 'x' } };
    expect(shapeNotification(request, '2024-11-05')).toBe(request);
  });
});
