import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type OutgoingHttpHeaders, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * One upstream URL and the keep-alive connection pool to it. Requests go out through
 * node:http (node:https for https URLs) with options built once, so a POST costs a header
 * object and a socket write, not a URL parse.
 */
export class HttpEndpoint {
  private readonly agent: HttpAgent;
  private readonly base: RequestOptions;
  private readonly send: typeof httpRequest;

  constructor(private url: URL) {
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') throw new Error(`unsupported URL scheme '${url.protocol}' (http: or https: expected)`);
    // keepAlive: every message is a POST, and a new TCP (and TLS) connection per message
    // would cost more than the message itself.
    this.agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.send = secure ? httpsRequest : httpRequest;
    this.base = {
      protocol: url.protocol,
      // URL keeps the brackets of an IPv6 literal; the request options want the bare address.
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      auth: url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined,
      agent: this.agent,
    };
  }

  request(method: 'GET' | 'POST' | 'DELETE', headers: OutgoingHttpHeaders): ClientRequest {
    // Node's client already turns Nagle off (noDelay), which latency-bound messages need.
    return this.send({ ...this.base, method, headers });
  }

  /**
   * Moves the endpoint to where a redirect points, when that is on the same origin (the
   * configured headers, credentials perhaps, are not for anyone else). Servers that mount
   * the endpoint at `/mcp/` answer `/mcp` with a 307; remembering the target saves a round
   * trip on every later message. False when the redirect is not to be followed.
   */
  follow(location: string | undefined): boolean {
    if (!location) return false;
    let target: URL;
    try {
      target = new URL(location, this.url);
    } catch {
      return false;
    }
    if (target.origin !== this.url.origin) return false;
    this.url = target;
    this.base.path = `${target.pathname}${target.search}`;
    return true;
  }

  /** Ends every connection, in use or idle. */
  destroy(): void {
    this.agent.destroy();
  }
}
