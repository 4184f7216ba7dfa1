// churn.mjs against `switchboard stdio`: the whole process is one session, so what a request
// leaves behind stays for the session's (the host's) life. One iteration runs a task as
// churn-http.mjs does, a call a `confirm` rule holds that this host answers on its own form
// (approve, approve and remember, decline) or withdraws by cancelling the call, a call it
// cancels while it reports progress, and a subscribe it undoes.
import { createInterface } from 'node:readline';

const REVISION = '2025-11-25';

export async function stdioHost({ child }) {
  const counts = {};
  const count = (what) => (counts[what] = (counts[what] ?? 0) + 1);
  const waiting = new Map();
  /** Asks of this host by request id of the call they are about (elicitation/create's related request). */
  const asked = new Map();
  let ids = 1;
  const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const request = (method, params, id = ids++) => new Promise((resolve) => (waiting.set(id, resolve), send({ jsonrpc: '2.0', id, method, params })));
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    if (message.method === 'elicitation/create') {
      // Its text names the arguments; the iteration that made the call decides.
      const i = Number(/"a":\s*(\d+)/.exec(message.params.message)?.[1]);
      (asked.get(i) ?? ((answer) => send({ jsonrpc: '2.0', id: message.id, result: answer })))(message);
      return;
    }
    if (message.method === 'roots/list') return send({ jsonrpc: '2.0', id: message.id, result: { roots: [] } });
    if (message.method === 'ping') return send({ jsonrpc: '2.0', id: message.id, result: {} });
    if ('id' in message && waiting.has(message.id)) {
      waiting.get(message.id)(message);
      waiting.delete(message.id);
    }
  });
  const init = await request('initialize', { protocolVersion: REVISION, capabilities: { tasks: { list: {}, cancel: {} }, elicitation: { form: {} } }, clientInfo: { name: 'churn-stdio', version: '1' } });
  if (!init.result) throw new Error(`stdio initialize failed: ${JSON.stringify(init)}`);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });

  async function task(i) {
    const tool = i % 4 === 3 ? 'jobs__endless' : 'jobs__research';
    const made = await request('tools/call', { name: tool, arguments: { text: `t${i}`, steps: 2 }, task: { ttl: 60_000 } });
    const taskId = made.result?.task?.taskId;
    count(taskId ? 'tasks' : `task refused ${made.error?.code}`);
    if (!taskId) return;
    await request('tasks/get', { taskId });
    await request('tasks/list', {});
    // 0: fetched; 1 and 3 (endless): cancelled; 2: left to its ttl.
    if (i % 4 === 0) await request('tasks/result', { taskId });
    else if (i % 4 !== 2) await request('tasks/cancel', { taskId });
  }

  async function approval(i) {
    const id = ids++;
    // The argument is unique to the iteration, so no remembered approval skips the form.
    const a = i;
    asked.set(a, (question) => {
      asked.delete(a);
      if (i % 5 === 4) return send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'churn' } });
      const result = i % 5 === 3 ? { action: 'decline' } : { action: 'accept', content: { remember: i % 2 ? 'For 1 minute' : 'Just this once' } };
      send({ jsonrpc: '2.0', id: question.id, result });
    });
    const done = request('tools/call', { name: 'shared__add', arguments: { a, b: 1 } }, id);
    // A withdrawn call is never answered (its cancellation says so): not awaited past its form.
    const answer = i % 5 === 4 ? await Promise.race([done, new Promise((r) => setTimeout(r, 3500))]) : await done;
    asked.delete(a);
    waiting.delete(id);
    count(`approval ${JSON.stringify(answer?.error?.code ?? (answer ? 'ok' : 'withdrawn'))}`);
  }

  async function session(i) {
    await task(i);
    await approval(i);
    await request('tools/call', { name: 'shared__echo', arguments: { text: `echo ${i}` } });
    const id = ids++;
    const slow = request('tools/call', { name: 'shared__slow', arguments: { ms: 2000, steps: 4 }, _meta: { progressToken: `p${i}` } }, id);
    setTimeout(() => send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'churn' } }), 30);
    await Promise.race([slow, new Promise((r) => setTimeout(r, 2500))]);
    waiting.delete(id);
    await request('resources/subscribe', { uri: 'fixture://static/hello' });
    await request('resources/unsubscribe', { uri: 'fixture://static/hello' });
  }

  return { daemon: child, width: 4, session: (i) => session(i), counts, close: () => child.stdin.end() };
}
