/** What an approval is for: who, which tool, which arguments, under which policy and rule. */
export interface ApprovalBinding {
  principal: string;
  /** The public tool name. */
  tool: string;
  /** A keyed digest of the canonical arguments: the same call, byte for byte. */
  argumentsDigest: string;
  /** PolicyEngine.digest when the approval was given. */
  policyDigest: string;
  /**
   * The confirm rule that asked. Under one policy a caller's roles can still change (a token's
   * groups): a call its own confirm once decided, and now a rule with approvers decides, is
   * not covered by what the caller remembered.
   */
  rule: string;
}

/** Bound on remembered approvals; those run out go first, then the oldest. */
const MAX_REMEMBERED = 10_000;

/**
 * Approvals a human chose to remember for a while: the same principal calling the same tool
 * with the same arguments under the same policy is not asked again until it runs out.
 * Anything else (other arguments, a changed policy) asks again. Kept in memory, so a restart
 * forgets them, which errs on the side of asking.
 */
export class ApprovalBook {
  private readonly until = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  remember(binding: ApprovalBinding, forMs: number): void {
    if (forMs <= 0) return;
    const key = keyOf(binding);
    this.until.delete(key);
    if (this.until.size >= MAX_REMEMBERED) this.makeRoom();
    this.until.set(key, this.now() + forMs);
  }

  /** Whether an approval for exactly this is remembered and still running; expired ones are dropped. */
  covers(binding: ApprovalBinding): boolean {
    const key = keyOf(binding);
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.until.delete(key);
    return false;
  }

  /** Forgets every approval of this principal (or all), e.g. when an admin revokes them. */
  forget(principal?: string): void {
    if (principal === undefined) return this.until.clear();
    for (const key of [...this.until.keys()]) if (key.startsWith(`${principal}\0`)) this.until.delete(key);
  }

  /**
   * Only at the bound, so the sweep's cost is paid when the book is full, not on every
   * approval. Expired entries go before the oldest: insertion order is not expiry order (an
   * approval remembered for a day may be older than a thousand remembered for a minute), and
   * evicting it would ask its human again while entries that no longer cover anything stay.
   */
  private makeRoom(): void {
    const now = this.now();
    for (const [key, until] of this.until) if (until <= now) this.until.delete(key);
    if (this.until.size >= MAX_REMEMBERED) this.until.delete(this.until.keys().next().value!);
  }

  get size(): number {
    return this.until.size;
  }
}

const keyOf = (b: ApprovalBinding) => `${b.principal}\0${b.tool}\0${b.argumentsDigest}\0${b.policyDigest}\0${b.rule}`;
