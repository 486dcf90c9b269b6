// Redis for limits, the key cache and revocations (REDIS_URL), shared by every API process.
// Every caller falls back when a command fails: limits are counted in this process's memory,
// keys are looked up in the database. So Redis trouble must make commands fail fast, never slow:
// - refused or dropped: there is no offline queue, so a command fails at once while the client
//   reconnects;
// - hung (paused, failing over, a link that drops packets): a command gets a quarter of a second,
//   and the first to time out drops its connection. The client then reconnects as it does after a
//   drop, and commands fail at once until a new connection's ready check is answered (each
//   attempt's check times out like any command). Without the drop, every request waited for its
//   own timeouts (a minute's count and a month's: half a second) for as long as Redis hung.
// A subscribed connection (revocations) sends no commands, so it would never see a hang: it pings
// every few seconds, and a ping that times out drops it the same way (it then subscribes again).
import { Command, Redis } from 'ioredis';
import type { Logger } from '../lib/log.js';

class FailFastRedis extends Redis {
  // Every command, those of MULTI ... EXEC and the ready check included, is sent through here.
  override sendCommand(command: Command, stream?: Parameters<Redis['sendCommand']>[1]): unknown {
    const sent = super.sendCommand(command, stream);
    const connection = this.stream;
    command.promise.catch((err: Error) => {
      // Destroyed, not ended: an ended connection waits for the hung server to close its side,
      // which a paused server does only when it resumes and a dead link or a failed-over primary
      // never does (TCP gives up after many minutes); destroyed, it closes now and the client
      // reconnects as after a drop.
      if (err.message === 'Command timed out' && connection === this.stream && !connection.destroyed) connection.destroy();
    });
    return sent;
  }
}

/** How often a subscribed connection checks that Redis still answers it. */
const SUBSCRIBER_PING_MS = 5_000;

/** A connection for SUBSCRIBE, with `redis`'s settings, that notices a hang by pinging. */
export function subscriberOf(redis: Redis): Redis {
  const subscriber = new FailFastRedis(redis.options);
  const pinging = setInterval(() => void subscriber.ping().catch(() => undefined), SUBSCRIBER_PING_MS);
  pinging.unref();
  subscriber.once('end', () => clearInterval(pinging));
  return subscriber;
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
