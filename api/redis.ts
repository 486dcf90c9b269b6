// Redis for limits, the key cache and revocations (REDIS_URL), shared by every API process.
// Every caller falls back when a command fails: limits are counted in this process's memory,
// keys are looked up in the database. So Redis trouble must make commands fail fast, never slow:
// - refused or dropped: there is no offline queue, so a command fails at once while the client
//   reconnects;
// - hung (paused, failing over, a link that drops packets): a command gets a quarter of a second,
//   and the first to time out drops its connection. The client then reconnects as it does after a
//   drop, and commands fail at once until a new connection's ready check is answered (each
//   attempt's check times out like any command). Without the drop, every request would wait for
//   its own timeouts (a minute's count and a month's: half a second) for as long as Redis hangs.
// A subscribed connection (revocations) sends no commands, so it would never see a hang: it pings
// every few seconds, and a ping that times out drops it the same way (it then subscribes again).
import crypto from 'node:crypto';
import { Command, Redis } from 'ioredis';
import type { Logger } from '../lib/log.js';

class FailFastRedis extends Redis {
  // Every command, those of MULTI ... EXEC and the ready check included, is sent through here.
  override sendCommand(command: Command, stream?: Parameters<Redis['sendCommand']>[1]): unknown {
    const sent = super.sendCommand(command, stream);
    const connection = this.stream;
    const readBefore = connection?.bytesRead;
    command.promise.catch((err: Error) => {
      if (err.message !== 'Command timed out') return;
      // Timers run before the network is read: after a slow turn of the event loop (load, a GC
      // pause) a reply already here is read only after its timeout fired. The next turn reads it;
      // a connection that has still read nothing since the command was sent is hung.
      // Destroyed, not ended: an ended connection waits for the hung server to close its side,
      // which a paused server does only when it resumes and a dead link or a failed-over primary
      // never does (TCP gives up after many minutes); destroyed, it closes now and the client
      // reconnects as after a drop.
      setImmediate(() => {
        if (connection === this.stream && !connection.destroyed && connection.bytesRead === readBefore) connection.destroy();
      });
    });
    return sent;
  }
}

/** How often a subscribed connection checks that Redis still answers it. */
const SUBSCRIBER_PING_MS = 5_000;

/** A connection for SUBSCRIBE that notices a hang by pinging (it sends nothing else). */
class Subscriber extends FailFastRedis {
  private readonly pinging = setInterval(() => void this.ping().catch(() => undefined), SUBSCRIBER_PING_MS).unref();

  override disconnect(reconnect = false): void {
    if (!reconnect) clearInterval(this.pinging); // for good (ioredis calls this with true to reconnect)
    super.disconnect(reconnect);
  }
}

/** A connection for SUBSCRIBE, with `redis`'s settings. */
export function subscriberOf(redis: Redis): Redis {
  return new Subscriber(redis.options);
}

export function connectRedis(url: string, log: Logger): Redis {
  const redis = new FailFastRedis(url, {
    // a command that failed has been answered from memory or the database: never sent again later
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: false,
    commandTimeout: 250,
    connectTimeout: 2_000,
  });
  redis.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
  return redis;
}

/**
 * One deployment's part of a Redis database (docs/decisions.md, "One Redis, several deployments").
 * Its keys live under `<label>:<digest of the deployment's secret>`, and a cached value is sealed
 * with an HMAC under that secret: another deployment on the same Redis database neither finds this
 * one's entries nor can have its own (or forged ones) trusted here, even under the same prefix.
 * The secret is the database's (the `deployment` table, made at its first migration), so every
 * API process on that database shares one scope, and no two databases do.
 */
export class RedisScope {
  /** The prefix of every Redis key and channel of this deployment. */
  readonly prefix: string;

  constructor(
    private readonly secret: string,
    label = 'afrates',
  ) {
    this.prefix = `${label}:${this.mac('redis-namespace').slice(0, 16)}`;
  }

  private mac(text: string): string {
    return crypto.createHmac('sha256', this.secret).update(text).digest('base64url');
  }

  /** `value` as stored under `key`: its MAC (bound to the key, so an entry can't be moved) and itself. */
  seal(key: string, value: string): string {
    return `${this.mac(`${key}\n${value}`)}.${value}`;
  }

  /** The value stored under `key`, or null when it was not sealed by this deployment. */
  open(key: string, stored: string): string | null {
    const dot = stored.indexOf('.');
    if (dot < 0) return null;
    const value = stored.slice(dot + 1);
    const expected = Buffer.from(this.mac(`${key}\n${value}`));
    const given = Buffer.from(stored.slice(0, dot));
    return given.length === expected.length && crypto.timingSafeEqual(given, expected) ? value : null;
  }
}

/** The scope of a deployment's `secret` as read from its database (undefined: no row); `label` starts its prefix (tests give each run its own). */
export function scopeOf(secret: string | undefined, label?: string): RedisScope {
  if (secret === undefined) throw new Error('the deployment table has no row: the database was not migrated by this version');
  return new RedisScope(secret, label);
}
