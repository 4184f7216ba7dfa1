/**
 * `npm run bench`: Switchboard against the bare bench upstream and mcp-proxy. A
 * measurement script, not a test: it reports figures and target verdicts but never
 * fails on them (exit 1 only when the bench itself could not run).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { machineInfo } from './machine-info.js';
import { aggregate, type AggregateRow } from './measure/aggregate.js';
import { parseOptions, USAGE, type BenchOptions } from './options.js';
import { errorText, progress } from './progress.js';
import { renderReport, type BenchReport } from './report.js';
import { runAuditScenario } from './scenarios/audit.js';
import { runPolicyScenario } from './scenarios/policy.js';
import { runIdleSessionsScenario, type IdleSessionsResult } from './scenarios/idle-sessions.js';
import { measureIdleRss, runMainMatrix } from './scenarios/main-matrix.js';
import { runPayloadScenario } from './scenarios/payload.js';
import { runToolsListScenario, type ToolsListResult } from './scenarios/tools-list.js';
import { killStrays, rememberTree, strayProcesses } from './stray-check.js';
import { evaluateTargets } from './target-checks.js';
import { ManagedProcess } from './targets/managed-process.js';
import { npmStartNodeFlags } from './targets/npm-start-flags.js';
import { BENCH_UPSTREAM, REPO_ROOT, startTarget, type StartContext } from './targets/start-targets.js';
import { BASELINE, TARGET_NAMES, type Target } from './targets/target.js';

const RESULTS_DIR = join(REPO_ROOT, '.bench');

async function main(argv: string[]): Promise<number> {
  let options: BenchOptions | 'help';
  try {
    options = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`${errorText(error)}\n\n${USAGE}\n`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!existsSync(BENCH_UPSTREAM)) {
    process.stderr.write(`${BENCH_UPSTREAM} is missing: run "npm run build" (npm run bench does it first)\n`);
    return 1;
  }

  const started = Date.now();
  const machine = machineInfo(REPO_ROOT);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const context: StartContext = { workDir: mkdtempSync(join(RESULTS_DIR, 'run-')) };
  const targets: Target[] = [];
  installInterruptHandlers(context);

  try {
    progress(`starting targets: ${options.targets.join(', ')}`);
    const startErrors: string[] = [];
    // One at a time: starting five Node processes at once on two cores would time out needlessly.
    for (const name of options.targets) {
      try {
        const target = await startTarget(name, context);
        targets.push(target);
        rememberTree(target.servingRoots);
        progress(`  ${name} ready (${target.url ?? 'stdio'}; tools ${target.tools.echo}, ${target.tools.payload})`);
      } catch (error) {
        startErrors.push(`${name}: ${errorText(error)}`);
        progress(`  ${name} FAILED to start: ${errorText(error)}`);
      }
    }
    if (targets.length === 0) throw new Error('no target started');
    const order = TARGET_NAMES.filter((name) => targets.some((target) => target.name === name));

    const idleRss = measureIdleRss(targets);
    const matrix = await runMainMatrix(targets, options);
    const main = { ...matrix, rows: aggregate(matrix.windows, BASELINE, order) };

    let toolsList: ToolsListResult | { error: string } | undefined;
    let payload: BenchReport['payload'];
    let idleSessions: IdleSessionsResult[] | undefined;
    if (!options.skipExtras) {
      const payloadRun = await runPayloadScenario(targets, options);
      payload = { ...payloadRun, rows: aggregate(payloadRun.windows, BASELINE, order) };
      try {
        toolsList = await runToolsListScenario(context, options);
      } catch (error) {
        toolsList = { error: errorText(error) };
        progress(`tools/list FAILED: ${errorText(error)}`);
      }
      idleSessions = await runIdleSessionsScenario(context, options, options.targets);
    }

    progress('stopping targets');
    await stopTargets(targets);
    // After the main targets are gone: the audit scenario's daemons and the in-process
    // writer then have the machine to themselves.
    const audit = await runAuditScenario(context, options);
    const policy = await runPolicyScenario(context, options);
    const strays = strayProcesses();
    if (strays.length > 0) killStrays(strays);

    const sbIdle = idleSessions?.find((row) => row.target === 'switchboard-stdio' && !row.error);
    const report: BenchReport = {
      machine,
      options,
      wallSeconds: (Date.now() - started) / 1000,
      loadAverageEnd: loadavg().map((value) => Math.round(value * 100) / 100),
      switchboardNodeFlags: npmStartNodeFlags(REPO_ROOT),
      startErrors,
      idleRss,
      main,
      ...(toolsList ? { toolsList } : {}),
      ...(payload ? { payload } : {}),
      ...(idleSessions ? { idleSessions } : {}),
      audit,
      policy,
      checks: evaluateTargets({
        windows: main.windows,
        concurrency: options.concurrency,
        ...(toolsList && !('error' in toolsList)
          ? { listing: { walkP50Ms: toolsList.walk.p50, daemonIdleRssMb: toolsList.daemonIdleRssMb, tools: toolsList.tools } }
          : {}),
        ...(sbIdle ? { idleSessions: { sessions: sbIdle.sessions, perSessionKb: sbIdle.perSessionKb } } : {}),
        ...(audit.daemon ? { audit: audit.daemon.windows } : {}),
        ...(policy.windows ? { policy: policy.windows } : {}),
      }),
      strays: strays.map((stray) => `${stray.pid} (${stray.comm})`),
    };
    const markdown = renderReport(report);
    writeResults(report, markdown);
    process.stdout.write(`${markdown}\n`);
    progress(`done in ${report.wallSeconds.toFixed(0)} s; results in .bench/latest.md and .bench/latest.json`);
    logFailures([...main.rows, ...(payload?.rows ?? [])]);
    return 0;
  } finally {
    await stopTargets(targets);
    await ManagedProcess.stopAll();
    const strays = strayProcesses();
    if (strays.length > 0) progress(`killing ${killStrays(strays)} processes left behind: ${strays.map((s) => s.pid).join(', ')}`);
    rmSync(context.workDir, { recursive: true, force: true });
  }
}

async function stopTargets(targets: Target[]): Promise<void> {
  await Promise.allSettled(targets.splice(0).map((target) => target.stop()));
}

function writeResults(report: BenchReport, markdown: string): void {
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const stamp = report.machine.date.replace(/[:.]/g, '-');
  writeFileSync(join(RESULTS_DIR, 'latest.json'), json);
  writeFileSync(join(RESULTS_DIR, 'latest.md'), `${markdown}\n`);
  // A dated copy, so that runs before and after a change can be compared.
  writeFileSync(join(RESULTS_DIR, `bench-${stamp}.json`), json);
}

function logFailures(rows: readonly AggregateRow[]): void {
  const failed = rows.filter((row) => row.failures > 0);
  if (failed.length > 0) progress(`WARNING: failed calls in ${failed.length} result rows (see the report)`);
}

/**
 * Ctrl-C or a kill must not leave daemons behind: stop what was started (gracefully,
 * so gateways stop their own children), then exit. A second signal kills at once.
 */
function installInterruptHandlers(context: StartContext): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      ManagedProcess.killAll();
      process.exit(130);
    }
    stopping = true;
    progress(`${signal}: stopping targets`);
    void ManagedProcess.shutDown().finally(() => {
      const strays = strayProcesses();
      if (strays.length > 0) killStrays(strays);
      rmSync(context.workDir, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Last resort for an exit through an uncaught error.
  process.on('exit', () => ManagedProcess.killAll());
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
