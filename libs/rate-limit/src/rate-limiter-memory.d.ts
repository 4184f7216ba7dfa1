// The memory limiter's own module, loaded without the package index (see bucket-store.ts).
declare module 'rate-limiter-flexible/lib/RateLimiterMemory.js' {
  import type { RateLimiterMemory } from 'rate-limiter-flexible';
  const Limiter: typeof RateLimiterMemory;
  export default Limiter;
}
