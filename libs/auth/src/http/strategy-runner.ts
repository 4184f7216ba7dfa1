import type { IncomingMessage } from 'node:http';

/** What runStrategy needs of a passport strategy. */
export interface PassportStrategy {
  authenticate(req: unknown, options?: unknown): void;
}

export type StrategyOutcome = { user: unknown } | { fail: true } | { error: unknown };

/**
 * Runs one passport strategy against a request and returns what it decided. This is what
 * passport.authenticate() does for each strategy, without its middleware, sessions or
 * redirects: the MCP endpoints answer before Nest's router (ADR 006) and need only the
 * outcome. Our strategies verify synchronously (a prepared SQLite statement), so the
 * outcome is known when authenticate() returns.
 */
export function runStrategy(strategy: PassportStrategy, req: IncomingMessage): StrategyOutcome {
  let outcome: StrategyOutcome | undefined;
  const attempt = Object.create(strategy) as PassportStrategy & {
    success(user: unknown): void;
    fail(): void;
    error(err: unknown): void;
    pass(): void;
    redirect(): void;
  };
  attempt.success = (user) => (outcome = { user });
  attempt.fail = () => (outcome = { fail: true });
  attempt.error = (error) => (outcome = { error });
  attempt.pass = () => (outcome = { fail: true });
  attempt.redirect = () => (outcome = { error: new Error('a strategy tried to redirect') });
  attempt.authenticate(req, {});
  return outcome ?? { error: new Error('the strategy did not decide synchronously') };
}
