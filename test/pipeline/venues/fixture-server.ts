// A tiny local HTTP server that answers fixed paths with fixture bodies, so a venue's real ccxt
// class (its url override included) parses a recorded response end to end.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/venues');

export function fixture(venue: string, name: string): unknown {
  return JSON.parse(readFileSync(path.join(FIXTURES, venue, name), 'utf8'));
}

export interface FixtureServer {
  readonly url: string;
  /** Paths requested, with their query strings. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** Serves `routes` (path without query -> JSON body); anything else is a 404. */
export async function serveFixtures(routes: Record<string, unknown>, headers: Record<string, string> = {}): Promise<FixtureServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    requests.push(url);
    const body = routes[url.split('?')[0]!];
    res.writeHead(body === undefined ? 404 : 200, { 'Content-Type': 'application/json', ...headers });
    res.end(body === undefined ? '{"error":"not found"}' : typeof body === 'string' ? body : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
