// Each endpoint's signing secret. The service must sign with it, so it cannot be kept as a hash:
// it is stored sealed with AES-256-GCM under a key of the operator's (WEBHOOK_SECRET_KEY, else one
// made once into var/keys/webhook-secrets.key), so a copy of the database alone reveals no secret.
// The secret itself is shown to the customer once (at creation and at rotation) and never logged.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface SecretBox {
  seal(secret: string): string;
  open(sealed: string): string;
}

/** A new signing secret: `whsec_` and 32 URL-safe base64 characters (192 random bits). */
export const newSigningSecret = (): string => `whsec_${crypto.randomBytes(24).toString('base64url')}`;

/** What lists show of a secret: enough to tell two apart, nothing to sign with. */
export const secretPrefix = (secret: string): string => secret.slice(0, 10);

const VERSION = 'v1';
const AAD = Buffer.from('afrates webhook secret');

function keyFrom(hex: string): Buffer {
  const key = Buffer.from(hex, 'hex');
  if (key.length !== 32) throw new Error('the webhook secret key must be 64 hex characters (32 bytes)');
  return key;
}

function readOrCreateKey(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const hex = crypto.randomBytes(32).toString('hex');
    // wx: two processes starting at once keep the first one's key
    try {
      fs.writeFileSync(file, hex, { mode: 0o600, flag: 'wx' });
      return hex;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
      throw e;
    }
  }
}

/**
 * The box that seals and opens secrets: `keyHex` (WEBHOOK_SECRET_KEY) if set, else the key kept
 * in `keyDir`. Every process that registers or delivers webhooks must use the same key.
 */
export function createSecretBox(opts: { keyHex?: string; keyDir: string }): SecretBox {
  const key = keyFrom(opts.keyHex ?? readOrCreateKey(path.join(opts.keyDir, 'webhook-secrets.key')));
  return {
    seal(secret) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv).setAAD(AAD);
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== VERSION || !iv || !tag || !data) throw new Error('not a sealed webhook secret');
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url')).setAAD(AAD);
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
