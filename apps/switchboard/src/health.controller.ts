import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { GatewayRuntime } from './gateway-runtime.js';

@Controller()
export class HealthController {
  constructor(@Inject(GatewayRuntime) private readonly runtime: GatewayRuntime) {}

  /** Up as soon as the HTTP listener is: for liveness probes. */
  @Get('healthz')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * 200 when every enabled upstream is connected (ready or degraded) and the audit log is
   * writable, else 503; always lists the upstreams, the audit log's state and the number of
   * host sessions open.
   */
  @Get('readyz')
  ready(@Res() res: ServerResponse): void {
    const upstreams = this.runtime.registry.statuses();
    const audit = this.runtime.audit?.status() ?? { enabled: false };
    const auditOk = !('writable' in audit) || audit.writable;
    const ready = auditOk && upstreams.every((u) => u.state === 'ready' || u.state === 'degraded');
    const body = JSON.stringify({ status: ready ? 'ready' : 'not_ready', sessions: this.runtime.sessions.size, upstreams, audit });
    res.writeHead(ready ? 200 : 503, { 'Content-Type': 'application/json' }).end(body);
  }
}
