import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RefusalListener } from '@switchboard/downstream';
import { HTTP_REFUSALS, refusedForeignPage } from './foreign-request.js';
import { GatewayRuntime } from './gateway-runtime.js';
import { stateOnly, upstreamReady } from './upstream-health.js';

@Controller()
export class HealthController {
  constructor(
    @Inject(GatewayRuntime) private readonly runtime: GatewayRuntime,
    @Inject(HTTP_REFUSALS) private readonly onRefused: RefusalListener,
  ) {}

  /** Up as soon as the HTTP listener is: for liveness probes. Says nothing else, so it is not checked. */
  @Get('healthz')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * 200 when every enabled upstream is connected (ready or degraded) or is a per-principal
   * one that nobody has the secrets for yet, and the audit log is writable, else 503
   * (`stopping` from the moment a shutdown starts to drain, `not_ready` otherwise); always
   * lists every enabled upstream, the audit log's state and the number of host sessions
   * open. The Host/Origin check of the MCP endpoints runs first: a rebound web page must not
   * read it. With `auth.mode: required` the gateway is reachable by more than
   * its owner and this endpoint asks for no credential, so it shows states only: the
   * upstreams' errors, warnings, process ids and server details, and the audit log's failure and
   * journal file, are in the daemon's log instead.
   */
  @Get('readyz')
  ready(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    if (refusedForeignPage(req, res, this.runtime.config, this.onRefused, 'json')) return;
    const config = this.runtime.config;
    const detailed = config.auth.mode === 'none';
    const statuses = this.runtime.upstreamHealth();
    const upstreams = detailed ? statuses : statuses.map(stateOnly);
    const status = this.runtime.audit?.status();
    const audit = !status ? { enabled: false } : detailed ? status : { ...status, failure: undefined, journal: undefined };
    const auditOk = !status || status.writable;
    // Draining refuses new requests: a load balancer must send them elsewhere now.
    const stopping = this.runtime.stopping;
    const ready = !stopping && auditOk && statuses.every(upstreamReady);
    const state = stopping ? 'stopping' : ready ? 'ready' : 'not_ready';
    const body = JSON.stringify({ status: state, sessions: this.runtime.sessions.size, upstreams, audit });
    res.writeHead(ready ? 200 : 503, { 'Content-Type': 'application/json' }).end(body);
  }
}
