// Signs rate payloads: HMAC-SHA256 with the server's secret (the contract's signature) and Ed25519
// (anyone can verify with the public key at GET /v1/certificates/keys). The secret and the key pair
// come from CERT_HMAC_SECRET / CERT_ED25519_PRIVATE_KEY, else are made once and kept under
// var/keys/, so certificates stay byte-identical across restarts.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Sql } from './db/pool.js';

/** JSON with keys sorted at every level and no spaces: the bytes that get signed. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * What an audit signature, a certificate or a fixing signs: canonical JSON of pair, rate (a decimal
 * string; null for a fixing without trades), sources, time; a fixing's kind (`"fixing":"local"`), so
 * it can never pass for a 5-minute certificate; and for simulated data (make demo)
 * `"market":"simulated"`, so a signature can never vouch for a simulated rate as a real one.
 */
export function signedRatePayload(pair: string, rate: string | null, sources: readonly string[], time: string, market: 'real' | 'simulated' = 'real', fixing?: string): string {
  return canonicalJson({ pair, rate, sources, time, fixing, market: market === 'simulated' ? market : undefined });
}

export interface CertificateSigner {
  hmac(payload: string): string;
  ed25519(payload: string): string;
  readonly publicKeyPem: string;
  readonly keyId: string;
}

function readOrCreate(file: string, create: () => string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const value = create();
    fs.writeFileSync(file, value, { mode: 0o600 });
    return value;
  }
}

export function createSigner(opts: { hmacSecret?: string; ed25519PrivateKeyPem?: string; keyDir: string }): CertificateSigner {
  const secret =
    opts.hmacSecret ?? readOrCreate(path.join(opts.keyDir, 'cert-hmac.secret'), () => crypto.randomBytes(32).toString('hex'));
  const privatePem =
    opts.ed25519PrivateKeyPem ??
    readOrCreate(path.join(opts.keyDir, 'cert-ed25519.pem'), () =>
      crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
  const privateKey = crypto.createPrivateKey(privatePem);
  const publicKeyPem = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  const keyId = crypto.createHash('sha256').update(publicKeyPem).digest('hex').slice(0, 16);
  return {
    hmac: (payload) => crypto.createHmac('sha256', secret).update(payload).digest('hex'),
    ed25519: (payload) => crypto.sign(null, Buffer.from(payload), privateKey).toString('base64'),
    publicKeyPem,
    keyId,
  };
}

/** Records the signer's public key (once; never changed) before it signs anything. */
export async function registerSigningKey(sql: Sql, signer: CertificateSigner): Promise<void> {
  await sql`
    INSERT INTO certificate_keys (key_id, public_key_pem) VALUES (${signer.keyId}, ${signer.publicKeyPem})
    ON CONFLICT (key_id) DO NOTHING`;
}
