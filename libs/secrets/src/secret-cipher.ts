import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SECRET_KEY_BYTES = 32;

/**
 * AES-256-GCM with the row's (principal, name) as associated data: a value copied into
 * another row, by SQL or by a restored backup, fails authentication instead of handing
 * one principal's token to another. Stored as iv | tag | ciphertext.
 */
export class SecretCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== SECRET_KEY_BYTES) throw new Error(`the secrets key must be ${SECRET_KEY_BYTES} bytes, got ${key.length}`);
  }

  seal(principal: string, name: string, value: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(rowBinding(principal, name));
    const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
  }

  /** Undefined when the blob is malformed or does not authenticate; callers word the error. */
  open(principal: string, name: string, sealed: Buffer): string | undefined {
    if (sealed.length < IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv(ALGORITHM, this.key, sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(rowBinding(principal, name));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** Names cannot contain NUL, so the separator makes the pair unambiguous; the tag versions the format. */
const rowBinding = (principal: string, name: string): Buffer => Buffer.from(`switchboard-secret-v1\0${name}\0${principal}`, 'utf8');
