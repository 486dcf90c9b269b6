// A TCP proxy between a client and a database server that can go silent the way a dead server or
// a dropped network path does: every byte already in flight and every later one is dropped, and
// nothing is closed, so the client hears neither an answer nor a reset. Connections made while it
// is silent are accepted and held silent too; after heal() new connections pass again, while the
// ones that went silent stay dead (their state is gone, as after a failover or a NAT's restart).
import net from 'node:net';

export interface SilentableProxy {
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** From now on nothing passes, in either direction, on any connection; none is closed. */
  silence(): void;
  /** New connections pass again (the silenced ones stay dead). */
  heal(): void;
  close(): Promise<void>;
}

export async function startProxy(target: { host: string; port: number }): Promise<SilentableProxy> {
  let silent = false;
  let accepted = 0;
  const pairs = new Set<{ client: net.Socket; server: net.Socket | null; dead: boolean }>();
  const hold = (socket: net.Socket) => {
    // stop reading: bytes pile up in the kernel, unacknowledged by the application, as if dropped
    socket.pause();
    socket.removeAllListeners('data');
    socket.on('error', () => {});
  };
  const server = net.createServer((client) => {
    accepted++;
    const pair = { client, server: null as net.Socket | null, dead: silent };
    pairs.add(pair);
    client.on('error', () => {});
    client.on('close', () => {
      pairs.delete(pair);
      if (!pair.dead) pair.server?.destroy();
    });
    if (pair.dead) return hold(client);
    const upstream = net.connect(target.port, target.host);
    pair.server = upstream;
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => {
      if (!pair.dead) client.destroy();
    });
    client.on('data', (chunk) => {
      if (!pair.dead) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!pair.dead) client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get accepted() {
      return accepted;
    },
    silence() {
      silent = true;
      for (const pair of pairs) {
        pair.dead = true;
        hold(pair.client);
        if (pair.server) hold(pair.server);
      }
    },
    heal() {
      silent = false;
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server?.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
