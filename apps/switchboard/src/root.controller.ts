import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RefusalListener } from '@switchboard/downstream';
import { HTTP_REFUSALS, refusedForeignPage } from './foreign-request.js';
import { GatewayRuntime } from './gateway-runtime.js';

/**
 * What the daemon's address says to a person who opens it in a browser (the README's quick
 * start prints it): where the MCP endpoints are, rather than the framework's bare
 * "Cannot GET /". Fixed text, without the Host it was asked under, the version or anything
 * about the upstreams, so it tells a stranger nothing /healthz does not.
 */
export function rootPageText(servesInbox: boolean): string {
  const lines = [
    "Switchboard: an MCP gateway. This address serves MCP hosts (IDEs, chat apps, agents), not web pages.",
    '',
    'MCP endpoints:',
    '  /mcp          Streamable HTTP: give this URL to your MCP host',
    '  /sse          HTTP+SSE, the legacy transport, for hosts that only speak that',
    '',
    'Status:',
    '  /readyz       the upstream servers and the audit log',
    '  /healthz      liveness',
  ];
  if (servesInbox) lines.push('', 'Web page:', '  /admin/inbox  questions that wait for a person (elicitations, approvals)');
  return `${lines.join('\n')}\n`;
}

@Controller()
export class RootController {
  constructor(
    @Inject(GatewayRuntime) private readonly runtime: GatewayRuntime,
    @Inject(HTTP_REFUSALS) private readonly onRefused: RefusalListener,
  ) {}

  /** Under the MCP endpoints' Host/Origin check, as /readyz: a rebound page learns nothing here either. */
  @Get()
  root(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    if (refusedForeignPage(req, res, this.runtime.config, this.onRefused, 'text')) return;
    res
      .writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' })
      .end(rootPageText(this.runtime.inbox !== undefined));
  }
}
