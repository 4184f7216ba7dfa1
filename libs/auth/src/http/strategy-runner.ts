import type { IncomingMessage } from 'node:http';

/** What runStrategy needs of a passport strategy. */
export interface PassportStrategy {
  authenticate(req: unknown, options?: unknown): void;
}

export type StrategyOutcome = { user: unknown } | { fail: true } | { error: unknown };

/**
 * Runs one passport strategy against a request and resolves with what it decided. This is
 * what passport.authenticate() does for each strategy, without its middleware, sessions or
 * redirects: the MCP endpoints answer before Nest's router (ADR 006) and need only the
 * outcome. A strategy decides once (success, fail or error), at once for an API key, after
 * a JWKS fetch for a token.
 */
export function runStrategy(strategy: PassportStrategy, req: IncomingMessage): Promise<StrategyOutcome> {
  return new Promise((resolve) => {
    const attempt = Object.create(strategy) as PassportStrategy & {
      success(user: unknown): void;
      fail(): void;
      error(err: unknown): void;
      pass(): void;
      redirect(): void;
    };
    attempt.success = (user) => resolve({ user });
    attempt.fail = () => resolve({ fail: true });
    attempt.error = (error) => resolve({ error });
    attempt.pass = () => resolve({ fail: true });
    attempt.redirect = () => resolve({ error: new Error('a strategy tried to redirect') });
    try {
      attempt.authenticate(req, {});
    } catch (error) {
      resolve({ error });
    }
  });
}
