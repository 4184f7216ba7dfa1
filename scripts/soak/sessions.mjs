// What one churned session does against the daemon (scripts/soak/soak.mjs runs them): over
// Streamable HTTP or /sse, lists, calls, cancels, progress, subscribes it never undoes,
// relayed questions it leaves unanswered, and an end by DELETE, by hang-up or by nothing.
import http from 'node:http';

const REVISION = '2025-11-25';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function sessionDriver(base, { credentialFor }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const counts = {};
  const count = (what) => (counts[what] = (counts[what] ?? 0) + 1);
  let ids = 1;
  const request = (method, params, id = ids++) => ({ jsonrpc: '2.0', id, method, params });

  /** One POST; the answer read whole (JSON or SSE), or cut off after `hangUpAfterMs`. */
  const post = (path, headers, body, hangUpAfterMs) =>
    new Promise((resolve) => {
      const data = JSON.stringify(body);
      const done = (res, text) => resolve({ status: res?.statusCode ?? 0, headers: res?.headers ?? {}, text });
      const req = http.request(
        base + path,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(data), ...headers },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (text += c));
          res.on('end', () => done(res, text));
          res.on('error', () => done(res, text));
        },
      );
      req.on('error', () => done(undefined, ''));
      if (hangUpAfterMs !== undefined) setTimeout(() => req.destroy(), hangUpAfterMs);
      req.end(data);
    });

  const remove = (headers) =>
    new Promise((resolve) => {
      const req = http.request(base + '/mcp', { method: 'DELETE', agent, headers }, (res) => res.resume().on('end', resolve));
      req.on('error', resolve);
      req.end();
    });

  /** A tools/call of `slow` with a progress token, cancelled while it runs. */
  const cancelledCall = async (path, headers, tool, token) => {
    const id = ids++;
    const call = post(path, headers, request('tools/call', { name: tool, arguments: { ms: 2000, steps: 4 }, _meta: { progressToken: token } }, id));
    await sleep(30);
    await post(path, headers, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'soak' } });
    await call;
  };

  /** A Streamable HTTP session initialized and listed: the headers of its requests, or undefined when refused. */
  async function open(credential, capabilities, name) {
    const init = await post('/mcp', credential, request('initialize', { protocolVersion: REVISION, capabilities, clientInfo: { name, version: '1' } }));
    count(`http initialize ${init.status}`);
    const session = init.headers['mcp-session-id'];
    if (!session) return undefined;
    const h = { ...credential, 'mcp-session-id': session, 'mcp-protocol-version': REVISION };
    await post('/mcp', h, { jsonrpc: '2.0', method: 'notifications/initialized' });
    await post('/mcp', h, request('tools/list', {}));
    return h;
  }

  async function streamableHttp(i) {
    const credential = await credentialFor(i);
    // Every other host can answer relayed questions; the others' go to the inbox.
    const capabilities = i % 2 ? { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } : {};
    const h = await open(credential, capabilities, `soak-${i}`);
    if (!h) return;
    const resources = await post('/mcp', h, request('resources/list', {}));
    const subscribable = [...new Set(resources.text.match(/"uri":"[^"]*hello[^"]*"/g) ?? [])].map((m) => m.slice(7, -1));
    for (const tool of ['shared__echo', 'own__echo']) {
      const echo = await post('/mcp', h, request('tools/call', { name: tool, arguments: { text: `soak ${i}` } }));
      count(echo.text.includes('-31429') ? 'rate-limited calls' : 'calls');
    }
    if (i % 10 === 8) {
      // A burst past the per-tool bucket (50 a second), as the anonymous loopback caller.
      const burst = await Promise.all(Array.from({ length: 60 }, (_, n) => post('/mcp', h, request('tools/call', { name: 'shared__add', arguments: { a: n, b: 1 } }))));
      for (const answer of burst) count(answer.text.includes('-31429') ? 'rate-limited calls' : 'calls');
    }
    await cancelledCall('/mcp', h, 'shared__slow', `shared-${i}`);
    await cancelledCall('/mcp', h, 'own__slow', `own-${i}`);
    await post('/mcp', h, request('tools/call', { name: 'shared__slow', arguments: { ms: 20, steps: 2 }, _meta: { progressToken: `done-${i}` } }));
    // Subscribed and never unsubscribed; one URI the catalog does not know.
    for (const uri of subscribable) await post('/mcp', h, request('resources/subscribe', { uri }));
    await post('/mcp', h, request('resources/subscribe', { uri: `fixture://soak/${i}` }));
    // Relayed questions the host hangs up on before answering.
    const asking = ['shared__ask_elicitation', 'shared__ask_sampling', 'own__ask_elicitation', 'own__ask_sampling'][i % 4];
    await post('/mcp', h, request('tools/call', { name: asking, arguments: { message: 'who?', prompt: 'what?' } }), 300);
    await post('/mcp', h, request('tools/call', { name: `nowhere__${i}`, arguments: {} }));
    await post('/mcp', h, request('prompts/get', { name: 'shared__greet', arguments: { name: 'soak' } }));
    // A third are left for the idle sweep.
    if (i % 3 !== 0) await remove(h);
    else count('http sessions abandoned');
  }

  function legacySse(i) {
    return new Promise((resolve) => {
      void credentialFor(i).then((credential) => {
        const stream = http.request(base + '/sse', { method: 'GET', headers: { accept: 'text/event-stream', ...credential } }, (res) => {
          count(`sse ${res.statusCode}`);
          if (res.statusCode !== 200) return res.resume().on('end', resolve);
          let received = '';
          let started = false;
          res.setEncoding('utf8');
          res.on('data', async (chunk) => {
            received += chunk;
            const endpoint = /event: endpoint\ndata: (\S+)/.exec(received)?.[1];
            if (!endpoint || started) return;
            started = true;
            const capabilities = i % 2 ? { sampling: {}, roots: {} } : {};
            await post(endpoint, credential, request('initialize', { protocolVersion: '2024-11-05', capabilities, clientInfo: { name: `soak-sse-${i}`, version: '1' } }));
            await post(endpoint, credential, { jsonrpc: '2.0', method: 'notifications/initialized' });
            await post(endpoint, credential, request('tools/list', {}));
            await post(endpoint, credential, request('tools/call', { name: 'shared__echo', arguments: { text: 'sse' } }));
            await post(endpoint, credential, request('tools/call', { name: 'shared__slow', arguments: { ms: 2000, steps: 4 }, _meta: { progressToken: `sse-${i}` } }));
            await post(endpoint, credential, request('resources/subscribe', { uri: 'fixture://static/hello' }));
            if (i % 2) await post(endpoint, credential, request('tools/call', { name: 'shared__ask_sampling', arguments: { prompt: 'p' } }));
            await sleep(50);
            // Hung up with a call, a question and a subscription still open.
            stream.destroy();
            resolve();
          });
          res.on('error', resolve);
          res.on('close', resolve);
        });
        stream.on('error', resolve);
        stream.end();
      });
    });
  }

  return { open, streamableHttp, legacySse, counts, post, request, close: () => agent.destroy() };
}
