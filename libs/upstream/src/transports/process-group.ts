/** How often a group being stopped is looked at, to see whether it has emptied. */
const EMPTIED_POLL_MS = 50;

/**
 * Sends `signal` to every process of the group; false when the group is empty (ESRCH). A
 * group we may not signal (EPERM: a member changed its user) still counts as there.
 */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Stops what is left of a process group once its leader is gone: SIGTERM, and SIGKILL if
 * it has not emptied within `graceMs`. Resolves when the group is empty, or `graceMs` after
 * the SIGKILL (a process in uninterruptible sleep survives it for a while; nothing more
 * can be done about it). A stdio upstream's leader is often a wrapper (npx, sh) whose
 * children (the server, a browser, a language server) outlive it if nobody signals them.
 */
export async function endProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (process.platform === 'win32') return;
  if (!signalProcessGroup(pgid, 'SIGTERM')) return;
  if (await emptied(pgid, graceMs)) return;
  signalProcessGroup(pgid, 'SIGKILL');
  await emptied(pgid, graceMs);
}

/** Whether the group empties within `ms`. There is no event for it: it is polled. */
async function emptied(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (signalProcessGroup(pgid, 0)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, EMPTIED_POLL_MS));
  }
  return true;
}
