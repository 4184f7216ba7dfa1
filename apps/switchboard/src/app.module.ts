import { Module, type DynamicModule } from '@nestjs/common';
import { GatewayRuntime } from './gateway-runtime.js';
import { HealthController } from './health.controller.js';

export interface AppParts {
  runtime: GatewayRuntime;
}

/**
 * Composition root of the HTTP daemon: hands the runtime's objects to the Nest modules. The
 * MCP endpoints are not here: daemon.ts serves them ahead of the framework (ADR 006).
 */
@Module({})
export class AppModule {
  static register(parts: AppParts): DynamicModule {
    return {
      module: AppModule,
      controllers: [HealthController],
      providers: [{ provide: GatewayRuntime, useValue: parts.runtime }],
    };
  }
}
