// One churn.mjs session over Streamable HTTP: a task it gets, lists and then fetches, cancels
// or leaves running, and a call a `confirm` rule holds, which it answers in the inbox as the
// same caller (approve, approve and remember, decline) or withdraws by ending the session.
import { sleep } from './harness.mjs';
import { sessionDriver } from './sessions.mjs';

/** The JSON-RPC messages of an answer, JSON or SSE. */
const messagesOf = (text) =>
  text
    .split('\n')
    .map((line) => line.replace(/^data: /, ''))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
const resultOf = (answer) => messagesOf(answer.text).find((m) => 'result' in m || 'error' in m);

export function httpHost(daemon) {
  const base = daemon.match[1];
  const driver = sessionDriver(base, { credentialFor: async () => ({}) });
  const { post, request, counts } = driver;
  const count = (what) => (counts[what] = (counts[what] ?? 0) + 1);
  const inbox = async (credential, path, body) => {
    const res = await fetch(base + path, {
      method: body ? 'POST' : 'GET',
      headers: { ...credential, ...(body && { 'content-type': 'application/json' }) },
      body: body && JSON.stringify(body),
    });
    return res.status === 200 ? res.json() : res.status;
  };

  async function task(h, i) {
    const tool = i % 4 === 3 ? 'jobs__endless' : 'jobs__research';
    const made = resultOf(await post('/mcp', h, request('tools/call', { name: tool, arguments: { text: `t${i}`, steps: 2 }, task: { ttl: 60_000 } })));
    const taskId = made?.result?.task?.taskId;
    count(taskId ? 'tasks' : `task refused ${made?.error?.code}`);
    if (!taskId) return;
    await post('/mcp', h, request('tasks/get', { taskId }));
    await post('/mcp', h, request('tasks/list', {}));
    // 0: fetched to the end; 1: cancelled; 2 and 3 (endless): left to the session's end.
    if (i % 4 === 0) await post('/mcp', h, request('tasks/result', { taskId }));
    if (i % 4 === 1) await post('/mcp', h, request('tasks/cancel', { taskId }));
  }

  async function approval(h, credential, i) {
    const call = post('/mcp', h, request('tools/call', { name: 'shared__add', arguments: { a: i % 7, b: 1 } }));
    if (i % 5 === 4) {
      // Withdrawn: the session ends while its call waits.
      await sleep(100);
      return { call };
    }
    for (let tries = 0; tries < 40; tries++) {
      const items = (await inbox(credential, '/admin/inbox/items'))?.items ?? [];
      const mine = items.find((item) => item.kind === 'approval' && item.arguments?.a === i % 7);
      if (mine) {
        const answer = i % 5 === 3 ? { action: 'decline' } : { action: 'approve', ...(i % 2 && { rememberForMs: 60_000 }) };
        count(`inbox ${answer.action} ${await inbox(credential, `/admin/inbox/items/${mine.id}/answer`, answer)}`);
        break;
      }
      if (await Promise.race([call.then(() => true), sleep(50)])) break; // remembered: never asked
    }
    count(`approval ${JSON.stringify(resultOf(await call)?.error?.code ?? 'ok')}`);
    return {};
  }

  async function session(i, credential) {
    const capabilities = { tasks: { list: {}, cancel: {} }, ...(i % 2 && { sampling: {} }) };
    const h = await driver.open(credential, capabilities, `churn-${i}`);
    if (!h) return;
    await task(h, i);
    const { call } = await approval(h, credential, i);
    // A sixth are left for the idle sweep.
    if (i % 6 !== 5) await new Promise((resolve) => fetch(base + '/mcp', { method: 'DELETE', headers: h }).then(resolve, resolve));
    if (call) count(`withdrawn ${JSON.stringify(resultOf(await call)?.error?.code ?? 'ok')}`);
  }

  return { daemon: daemon.child, width: 8, session, counts, close: driver.close };
}
