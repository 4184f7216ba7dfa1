import { All, Controller, Inject, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LegacySseService } from './legacy-sse.service.js';
import { StreamableHttpService } from './streamable-http.service.js';

/**
 * The MCP endpoints. Handlers take the raw request and response: the transports read the
 * body themselves (so malformed JSON becomes -32700, not an HTML 400) and may stream.
 */
@Controller()
export class McpHttpController {
  constructor(
    @Inject(StreamableHttpService) private readonly streamable: StreamableHttpService,
    @Inject(LegacySseService) private readonly legacy: LegacySseService,
  ) {}

  @All('mcp')
  mcp(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    return this.streamable.handle(req, res);
  }

  @All('sse')
  sse(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    this.legacy.open(req, res);
  }

  @All('messages')
  messages(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    return this.legacy.message(req, res);
  }
}
