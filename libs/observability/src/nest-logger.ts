import type { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * Nest's own start-up narration: a line per module initialized and per route mapped, about
 * twenty at every start. It says nothing an operator can act on (the daemon logs where it
 * listens and how each upstream is doing), so it goes out at debug rather than info.
 */
const BOOTSTRAP_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/** Routes Nest's own framework messages into the same pino stream as everything else. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    if (context !== undefined && BOOTSTRAP_CONTEXTS.has(context)) this.logger.debug({ context }, String(message));
    else this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
