import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type CryptoKey as JoseKey } from 'jose';

export interface JwksIssuerOptions {
  /** How many RS256 key pairs the issuer publishes, with kids k1, k2 (a rotation publishes two). */
  keys?: 1 | 2;
  /**
   * Whether each published JWK names its alg (RS256). Many issuers leave alg out, and the
   * gateway must then choose the key by kid and key type alone; tests of that pass false.
   */
  publishAlg?: boolean;
}

export interface JwksIssuer {
  /** The private halves, in kid order (k1 first): what the test signs tokens with. */
  signingKeys: JoseKey[];
  /** The public halves, in the same order. */
  publicKeys: JoseKey[];
  /** http://127.0.0.1:PORT/jwks.json, for auth.jwt.jwksUrl. */
  jwksUrl: string;
  /** Stops listening; not awaited, as the daemon may hold a keep-alive connection open. */
  close(): void;
}

/**
 * An identity provider's JWKS endpoint, served by the test on an ephemeral port: every request
 * is answered 200 with `{ keys: [...] }`, each key `{ ...jwk, kid, alg?, use: 'sig' }`.
 */
export async function startJwksIssuer({ keys = 1, publishAlg = true }: JwksIssuerOptions = {}): Promise<JwksIssuer> {
  const pairs = [];
  for (let i = 0; i < keys; i++) pairs.push(await generateKeyPair('RS256'));
  const published = await Promise.all(
    pairs.map(async (pair, i) => ({ ...(await exportJWK(pair.publicKey)), kid: `k${i + 1}`, ...(publishAlg ? { alg: 'RS256' } : {}), use: 'sig' })),
  );
  const server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: published })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    signingKeys: pairs.map((pair) => pair.privateKey),
    publicKeys: pairs.map((pair) => pair.publicKey),
    jwksUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`,
    close: () => void server.close(),
  };
}
