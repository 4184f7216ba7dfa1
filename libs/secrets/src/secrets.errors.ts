/** Why a secret operation was refused; lets the CLI tell bad input (exit 2) from a bad key. */
export enum SecretErrorCode {
  /** A principal, name or value breaks the rules; nothing was stored. */
  Invalid = 'SECRET_INVALID',
  /** A stored value does not decrypt: another key, or a value moved to another row. */
  Undecryptable = 'SECRET_UNDECRYPTABLE',
}

/** Its message names the principal and the secret, never a value. */
export class SecretError extends Error {
  constructor(
    readonly code: SecretErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SecretError';
  }
}
