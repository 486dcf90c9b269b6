// A tiny local HTTP server that answers fixed paths with fixture bodies, so a venue's real ccxt
// class (its url override included) parses a payload in the venue's shape end to end. Bodies go
// out byte for byte as the fixture has them (integers beyond 2^53 included); each venue's folder
// names its sources (SOURCE.md).
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/venues');

/** A fixture's text, as the venue would send it. */
export function fixture(venue: string, name: string): string {
  return readFileSync(path.join(FIXTURES, venue, name), 'utf8');
}

export interface FixtureServer {
  readonly url: string;
  /** Paths requested, with their query strings. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** What a route answers: a body (text as it is, anything else as JSON), or one made per request from its URL. */
export type Route = unknown | ((url: URL) => unknown);

/** Serves `routes` (path without query -> body); anything else is a 404. */
export async function serveFixtures(routes: Record<string, Route>, headers: Record<string, string> = {}): Promise<FixtureServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    requests.push(url);
    const route = routes[url.split('?')[0]!];
    const body = typeof route === 'function' ? (route as (u: URL) => unknown)(new URL(url, 'http://fixture.invalid')) : route;
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
