import { Module, type DynamicModule } from '@nestjs/common';
import { LegacySseService } from './http/legacy-sse.service.js';
import { McpHttpController } from './http/mcp-http.controller.js';
import { StreamableHttpService } from './http/streamable-http.service.js';

/**
 * The HTTP face of the gateway. The app builds the transport services from the runtime it
 * owns (the same runtime also serves stdio), so this module only declares the routes.
 */
@Module({})
export class DownstreamModule {
  static register(services: { streamable: StreamableHttpService; legacy: LegacySseService }): DynamicModule {
    return {
      module: DownstreamModule,
      controllers: [McpHttpController],
      providers: [
        { provide: StreamableHttpService, useValue: services.streamable },
        { provide: LegacySseService, useValue: services.legacy },
      ],
    };
  }
}
