import { Module, type DynamicModule } from '@nestjs/common';
import { AdminModule } from '@switchboard/admin';
import type { AuditQuery } from '@switchboard/audit';
import type { RefusalListener, RequestAuthenticator } from '@switchboard/downstream';
import { HTTP_REFUSALS } from './foreign-request.js';
import { GatewayRuntime } from './gateway-runtime.js';
import { HealthController } from './health.controller.js';
import { RootController } from './root.controller.js';

export interface AppParts {
  runtime: GatewayRuntime;
  /** Reads the daemon's audit database for the admin API; absent when the audit log is disabled. */
  auditQuery?: AuditQuery;
  /** Who a request is from (the admin API requires the admin role with auth.mode: required). */
  authenticate?: RequestAuthenticator;
  /** Told of every request the admin module and the pages refuse, as the MCP endpoints' (the daemon's one listener). */
  onRefused: RefusalListener;
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
      imports: [
        AdminModule.register({
          auditQuery: parts.auditQuery,
          flushAudit: parts.runtime.audit && (() => parts.runtime.audit!.flush()),
          pendingAudit: parts.runtime.audit && (() => parts.runtime.audit!.pending()),
          config: () => parts.runtime.config,
          onRefused: parts.onRefused,
          onCredentialLapse: parts.runtime.audit && ((ended) => parts.runtime.audit!.recordCredentialLapse({ ...ended, transport: 'inbox' })),
          authenticate: parts.authenticate,
          inbox: parts.runtime.inbox,
          rolesOf: (principal) => parts.runtime.policy.rolesOf(principal),
        }),
      ],
      controllers: [HealthController, RootController],
      providers: [
        { provide: GatewayRuntime, useValue: parts.runtime },
        { provide: HTTP_REFUSALS, useValue: parts.onRefused },
      ],
    };
  }
}
