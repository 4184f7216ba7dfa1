import { Module, type DynamicModule, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { AdminGuardMiddleware } from './admin-guard.middleware.js';
import { ADMIN_OPTIONS, type AdminOptions } from './admin-options.js';
import { AuditApiController } from './audit-api.controller.js';

/** The admin HTTP API under /admin. Every route there, known or not, passes the guard first. */
@Module({})
export class AdminModule implements NestModule {
  static register(options: AdminOptions): DynamicModule {
    return {
      module: AdminModule,
      controllers: [AuditApiController],
      providers: [{ provide: ADMIN_OPTIONS, useValue: options }, AdminGuardMiddleware],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(AdminGuardMiddleware).forRoutes('admin{/*path}');
  }
}
