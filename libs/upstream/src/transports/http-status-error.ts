import type { IncomingMessage } from 'node:http';

const MAX_BODY_CHARS = 200;
const BODY_WAIT_MS = 1000;

/**
 * An HTTP answer outside 2xx. `status` is what the connection reads (httpStatusOf): a 4xx to
 * the initialize POST means a legacy HTTP+SSE server, a 404 later means the session is gone.
 * The message names the status and the start of the body, never anything of ours.
 */
export class HttpStatusError extends Error {
  /** The message without the hint: the part the upstream wrote, which is redacted before anyone reads it. */
  readonly upstreamText: string;

  constructor(
    readonly status: number,
    statusText: string | undefined,
    /** The start of the body, whitespace folded: a JSON-RPC error in it is read (modern-only.ts). */
    readonly body: string,
    /** What the status means for this gateway, when the status alone would mislead. Ours: never redacted. */
    readonly hint = '',
  ) {
    const upstreamText = `upstream answered HTTP ${status}${statusText ? ` ${statusText}` : ''}${body ? `: ${body}` : ''}`;
    super(hint ? `${upstreamText}; ${hint}` : upstreamText);
    this.upstreamText = upstreamText;
    this.name = 'HttpStatusError';
  }
}

/**
 * A 2xx answer to a request whose content type is neither JSON nor an event stream (an HTML
 * page of a proxy, say): the server was reached and answered what no client reads. The
 * connection names the type to the host (`answered`), cut, as it names a status.
 */
export class ContentTypeError extends Error {
  /** What the upstream did, as the host is told it: "answered with content type '...', not ...". */
  readonly answered: string;

  constructor(contentType: string) {
    const what = contentType === '' ? 'no content type' : `content type '${contentType.slice(0, 100)}'`;
    const answered = `answered with ${what}, not JSON or an event stream`;
    super(`upstream ${answered}`);
    this.answered = answered;
    this.name = 'ContentTypeError';
  }
}

/** The error for a non-2xx response, after reading at most the start of its body (briefly). */
export function statusError(res: IncomingMessage): Promise<HttpStatusError> {
  return new Promise((resolve) => {
    let text = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // The rest of the body is not worth the wait, nor the socket.
      if (!res.complete) res.destroy();
      const body = text.replace(/\s+/g, ' ').trim().slice(0, MAX_BODY_CHARS);
      resolve(new HttpStatusError(res.statusCode ?? 0, res.statusMessage, body, oauthHint(res)));
    };
    const timer = setTimeout(finish, BODY_WAIT_MS);
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_BODY_CHARS * 4) finish();
    });
    res.on('error', finish);
    res.on('close', finish);
    res.on('end', finish);
  });
}

/**
 * A 401 whose WWW-Authenticate names a Bearer challenge is a server that hosts (Cursor,
 * VS Code, Claude Code) sign in to with OAuth, in a browser. Switchboard runs unattended and
 * does not, which a config copied from such a host cannot show: say what to configure instead.
 */
function oauthHint(res: IncomingMessage): string {
  const challenge = res.headers['www-authenticate'];
  if (res.statusCode !== 401 || typeof challenge !== 'string' || !/^\s*bearer\b/i.test(challenge)) return '';
  return (
    'the server wants a bearer token, which hosts get by an OAuth sign-in that Switchboard does not do for its ' +
    'upstreams: give a valid token in headers (Authorization: "Bearer ${env:NAME}"), or ${secret:NAME} with ' +
    'isolation: per-principal'
  );
}
