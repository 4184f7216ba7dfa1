import { formatPath } from './config.errors.js';
import { SECRET_NAME, secretMarker } from './config.secrets.js';

/** Where in a server entry variables are expanded; nowhere else, so a `$` elsewhere is just a `$`. */
const EXPANDED_FIELDS = ['command', 'args', 'env', 'cwd', 'url', 'headers'] as const;
const SERVER_MAPS = ['mcpServers', 'servers'] as const;

/** `$${` (a literal `${`), `${...}`, or a `${` that is never closed. */
const REFERENCE = /\$\$\{|\$\{([^{}]*)\}|\$\{/g;
/** `NAME`, `env:NAME`, and either with `:-default` (Claude Code's .mcp.json writes `${NAME:-default}`). */
const VARIABLE = /^(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;
const SECRET = /^secret:(.*)$/;
/**
 * What VS Code and Cursor fill in themselves in an mcp.json: their predefined variables and
 * VS Code's `${input:...}` (asked of the user), `${config:...}`, `${command:...}`. Named as
 * such, since "environment variable workspaceFolder is not set" would send people looking
 * in the wrong place.
 */
const EDITOR_PREDEFINED = new Set(['workspaceFolder', 'workspaceFolderBasename', 'workspaceRoot', 'userHome', 'pathSeparator', '/', 'cwd']);
const EDITOR_PREFIXED = /^(input|config|command):/;
/**
 * Where a per-principal server may use the caller's secrets. Not in args: every local user
 * can read a process's arguments (ps), while its environment is private to its owner.
 */
const SECRET_FIELDS = new Set(['env', 'headers']);

export interface ExpansionIssue {
  path: string;
  reason: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Replaces `${NAME}`, `${env:NAME}` and `${NAME:-default}` in the server fields that may
 * carry secrets or machine-specific paths. Works on the raw parsed file, before validation,
 * so a URL is checked as it will be used. Returns a copy; values of the wrong type are left
 * for the schema to report.
 */
export function expandVariables(raw: unknown, env: Env): { value: unknown; issues: ExpansionIssue[] } {
  const issues: ExpansionIssue[] = [];
  if (!isRecord(raw)) return { value: raw, issues };
  const value: Record<string, unknown> = { ...raw };

  for (const mapKey of SERVER_MAPS) {
    const servers = raw[mapKey];
    if (!isRecord(servers)) continue;
    const report = (path: PropertyKey[], reason: string) => issues.push({ path: formatPath(path), reason });
    // fromEntries, not assignment: a server named __proto__ must stay a key for the rules to refuse.
    const out = Object.fromEntries(
      Object.entries(servers).map(([name, server]) => [name, expandServer(server, env, [mapKey, name], report)]),
    );
    value[mapKey] = out;
  }
  return { value, issues };
}

type Report = (path: PropertyKey[], reason: string) => void;

/** Whether `${secret:NAME}` may appear in a field, and if not, why. */
type SecretsAllowed = true | string;

function expandServer(server: unknown, vars: Env, at: PropertyKey[], report: Report): unknown {
  if (!isRecord(server)) return server;
  const copy: Record<string, unknown> = { ...server };
  const perPrincipal = server['isolation'] === 'per-principal';
  for (const field of EXPANDED_FIELDS) {
    const secrets: SecretsAllowed = !SECRET_FIELDS.has(field)
      ? `cannot be used in ${field}; secrets go in env (stdio) or headers (http, sse)`
      : perPrincipal || 'needs isolation: per-principal (a secret belongs to the principal making the call)';
    if (field in server) copy[field] = expandDeep(server[field], vars, secrets, [...at, field], report);
  }
  return copy;
}

function expandDeep(value: unknown, vars: Env, secrets: SecretsAllowed, path: PropertyKey[], report: Report): unknown {
  if (typeof value === 'string') return expandString(value, vars, secrets, (reason) => report(path, reason));
  if (Array.isArray(value)) return value.map((item, i) => expandDeep(item, vars, secrets, [...path, i], report));
  if (isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandDeep(v, vars, secrets, [...path, k], report)]));
  }
  return value;
}

/**
 * Expands one string. Unknown or malformed references are reported and left as written,
 * so the caller can still show the value without inventing one. `${secret:NAME}` becomes
 * a marker that only the per-principal connection fills in (config.secrets.ts).
 */
function expandString(input: string, vars: Env, secrets: SecretsAllowed, report: (reason: string) => void): string {
  return input.replace(REFERENCE, (match, body: string | undefined) => {
    if (match === '$${') return '${';
    if (body === undefined) {
      report('has a "${" with no closing "}"; write "$${" for a literal "${"');
      return match;
    }
    const secret = SECRET.exec(body);
    if (secret) {
      if (!SECRET_NAME.test(secret[1])) {
        report(`"${match}": a secret name is 1 to 64 of A-Z a-z 0-9 _, not starting with a digit`);
        return match;
      }
      if (secrets !== true) {
        report(`"${match}" ${secrets}`);
        return match;
      }
      return secretMarker(secret[1]);
    }
    const editor = vars[body] === undefined ? editorOnly(body) : undefined;
    if (editor !== undefined) {
      report(`"${match}" ${editor}`);
      return match;
    }
    const variable = VARIABLE.exec(body);
    if (variable === null) {
      report(`"${match}" is not a variable reference; use \${NAME}, \${env:NAME} or \${NAME:-default}, or "$\${" for a literal "\${"`);
      return match;
    }
    const name = variable[1]!;
    const fallback = variable[2];
    const found = vars[name];
    // As in the shell: the default stands in for a variable that is unset or empty.
    if (fallback !== undefined) return found || fallback;
    if (found === undefined) {
      report(`environment variable ${name} is not set`);
      return match;
    }
    return found;
  });
}

/** Why an editor's own variable cannot be expanded here, or undefined for any other reference. */
function editorOnly(body: string): string | undefined {
  const prefix = EDITOR_PREFIXED.exec(body)?.[1];
  if (prefix === 'input') {
    return "is a VS Code input, which the editor asks the user for; Switchboard cannot ask: use ${env:NAME} and set NAME in the daemon's environment";
  }
  if (prefix !== undefined) return "is filled in by VS Code from its own settings; write the value, or use ${env:NAME}";
  if (EDITOR_PREDEFINED.has(body)) {
    return 'is filled in by the editor (VS Code, Cursor), and Switchboard has no workspace: write the path (a relative cwd is relative to this file), or use ${HOME} for the home folder';
  }
  return undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
