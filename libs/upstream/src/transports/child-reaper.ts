import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Kills upstream children when the daemon dies without cleaning up (SIGKILL, OOM, crash).
 *
 * A tiny `sh` process, started once, reads "add <pgid>" / "del <pgid>" lines on a pipe from
 * the daemon. The daemon's death closes the pipe; the reaper then sends SIGTERM and, after a
 * grace period, SIGKILL to every process group still registered. The kernel's parent-death
 * signal would be neater but is not honoured everywhere (it is not in our CI's VMs), and
 * stdin EOF alone is ignored by many MCP servers. A shell costs about a megabyte.
 */
const SCRIPT = `
pgids=""
while IFS= read -r line; do
  case "$line" in
    "add "*) pgids="$pgids \${line#add }" ;;
    "del "*) p="\${line#del }"; keep=""; for x in $pgids; do [ "$x" = "$p" ] || keep="$keep $x"; done; pgids="$keep" ;;
  esac
done
[ -z "$pgids" ] && exit 0
for p in $pgids; do kill -TERM -"$p" 2>/dev/null; done
sleep 2
for p in $pgids; do kill -KILL -"$p" 2>/dev/null; done
`;

let reaper: ChildProcess | undefined;

function ensureReaper(): ChildProcess | undefined {
  if (process.platform === 'win32') return undefined;
  if (reaper && reaper.exitCode === null && reaper.stdin?.writable) return reaper;
  reaper = spawn('/bin/sh', ['-c', SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  reaper.on('error', () => (reaper = undefined));
  reaper.stdin!.on('error', () => undefined);
  // Neither the process nor its pipe may keep the daemon alive.
  reaper.unref();
  (reaper.stdin as unknown as { unref?: () => void }).unref?.();
  return reaper;
}

export function registerChildGroup(pgid: number): void {
  ensureReaper()?.stdin?.write(`add ${pgid}\n`);
}

export function unregisterChildGroup(pgid: number): void {
  if (reaper?.stdin?.writable) reaper.stdin.write(`del ${pgid}\n`);
}
