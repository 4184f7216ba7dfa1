import { Module, type DynamicModule } from '@nestjs/common';
import { DownstreamModule, LegacySseService, StreamableHttpService } from '@switchboard/downstream';
import { GatewayRuntime } from './gateway-runtime.js';
import { HealthController } from './health.controller.js';

export interface AppParts {
  runtime: GatewayRuntime;
  streamable: StreamableHttpService;
  legacy: LegacySseService;
}

/** Composition root of the HTTP daemon: hands the runtime's objects to the Nest modules. */
@Module({})
export class AppModule {
  static register(parts: AppParts): DynamicModule {
    return {
      module: AppModule,
      imports: [DownstreamModule.register({ streamable: parts.streamable, legacy: parts.legacy })],
      controllers: [HealthController],
      providers: [{ provide: GatewayRuntime, useValue: parts.runtime }],
    };
  }
}
