import { Module, type DynamicModule, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AdminErrorFilter } from './admin-error.filter.js';
import { AdminGuardMiddleware } from './admin-guard.middleware.js';
import { ADMIN_OPTIONS, type AdminOptions } from './admin-options.js';
import { AuditApiController } from './audit-api.controller.js';
import { InboxAccess } from './inbox/inbox-access.js';
import { InboxEventStreams } from './inbox/inbox-events.js';
import { InboxController } from './inbox/inbox.controller.js';
import { InboxSessions } from './inbox/inbox-sessions.js';

/** The admin HTTP API and the inbox page under /admin. Every route there, known or not, passes the guard first. */
@Module({})
export class AdminModule implements NestModule {
  static register(options: AdminOptions): DynamicModule {
    return {
      module: AdminModule,
      controllers: [AuditApiController, InboxController],
      providers: [
        { provide: ADMIN_OPTIONS, useValue: options },
        { provide: APP_FILTER, useClass: AdminErrorFilter },
        InboxSessions,
        InboxAccess,
        InboxEventStreams,
        AdminGuardMiddleware,
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(AdminGuardMiddleware).forRoutes('admin{/*path}');
  }
}
