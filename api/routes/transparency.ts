// The public transparency log (lib/transparency/log.ts): every certificate, fixing and restatement
// is a leaf of an RFC 9162 Merkle tree. Signed tree heads, and the inclusion and consistency proofs
// anyone can check against a head they kept. No key needed; limited per address (RateLimiter.consumePublic).
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import type { Sql } from '../../lib/db/connect.js';
import { notFound, validationError } from '../errors.js';
import { date } from '../../lib/format.js';
import type { Operation } from '../operation.js';
import {
  TRANSPARENCY_CONSISTENCY_RESPONSE,
  TRANSPARENCY_HEADS_RESPONSE,
  TRANSPARENCY_HEAD_RESPONSE,
  TRANSPARENCY_INCLUSION_RESPONSE,
  type TransparencyConsistencyResponse,
  type TransparencyHeadResponse,
  type TransparencyHeadsResponse,
  type TransparencyInclusionResponse,
} from '../schemas.js';
import { DATE, NO_QUERY, parseQuery } from '../validate.js';
import { consistencyProofOf, entryById, headsOfDay, inclusionProofOf, latestHead, treeSize, type SignedHead } from '../../lib/transparency/log.js';

const SIZE = { type: 'integer', minimum: 1 } as const;
const headsQuery = { type: 'object', additionalProperties: false, properties: { date: { ...DATE, description: 'UTC day; default today' } } } as const;
const inclusionQuery = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[!-~]{1,200}$', maxLength: 200, description: 'entry id (printable ASCII), e.g. CERT-BTCNGN-20261120T100500Z' },
    tree_size: { ...SIZE, description: "size of the tree to prove inclusion in; default the newest head's" },
  },
} as const;
const consistencyQuery = {
  type: 'object',
  required: ['first', 'second'],
  additionalProperties: false,
  properties: { first: { ...SIZE, description: 'size of the older tree' }, second: { ...SIZE, description: 'size of the newer tree, at least first' } },
} as const;

const HEAD_TEXT =
  'A signed tree head: the size and root hash (RFC 9162 MTH, SHA-256, hex) of the log at a time, signed with Ed25519. ' +
  'Verify `signature` over the bytes of `signed_payload` with the key `key_id` from GET /v1/certificates/keys. Keep heads: ' +
  'a consistency proof from a head you kept to a newer one shows that no entry was changed or dropped in between.';

export const operations: Operation[] = [
  {
    method: 'get',
    path: '/v1/transparency/head',
    summary: "The transparency log's newest signed tree head",
    description: HEAD_TEXT,
    tier: null,
    access: 'public',
    query: NO_QUERY,
    response: TRANSPARENCY_HEAD_RESPONSE,
    errors: ['not_found', 'rate_limit_exceeded'],
  },
  {
    method: 'get',
    path: '/v1/transparency/heads',
    summary: 'The signed tree heads of one UTC day',
    description: `${HEAD_TEXT} Every head of the current UTC day is listed; once a day is over, only its last head is kept, for good.`,
    tier: null,
    access: 'public',
    query: headsQuery,
    response: TRANSPARENCY_HEADS_RESPONSE,
    errors: ['rate_limit_exceeded'],
  },
  {
    method: 'get',
    path: '/v1/transparency/proof/inclusion',
    summary: 'Proof that an entry (a certificate, fixing or restatement) is in the log',
    description:
      'The entry as logged (canonical JSON), its leaf hash SHA-256(0x00 || entry) and its audit path in the tree of `tree_size` leaves. ' +
      'Check it against the root of a signed head of that size with the algorithm of RFC 9162 section 2.1.3.2 (interior nodes: SHA-256(0x01 || left || right)). ' +
      "404 when the id is unknown, or was appended after that tree; 400 when tree_size is beyond the log's size.",
    tier: null,
    access: 'public',
    query: inclusionQuery,
    response: TRANSPARENCY_INCLUSION_RESPONSE,
    errors: ['not_found', 'rate_limit_exceeded'],
  },
  {
    method: 'get',
    path: '/v1/transparency/proof/consistency',
    summary: 'Proof that the log of `first` entries is a prefix of the log of `second` entries',
    description:
      'Check it against the root hashes of two signed heads of those sizes with the algorithm of RFC 9162 section 2.1.4.2. ' +
      "400 when first > second or second is beyond the log's size.",
    tier: null,
    access: 'public',
    query: consistencyQuery,
    response: TRANSPARENCY_CONSISTENCY_RESPONSE,
    errors: ['rate_limit_exceeded'],
  },
];

function present(head: SignedHead): TransparencyHeadResponse {
  return {
    tree_size: head.treeSize,
    root_hash: head.rootHash,
    timestamp: head.timestamp,
    signature: head.signature,
    key_id: head.keyId,
    algorithm: 'Ed25519',
    signed_payload: head.signedPayload,
  };
}

/** 400 unless the log holds at least `size` entries. */
async function withinLog(sql: Sql, size: number, param: string): Promise<void> {
  const current = await treeSize(sql);
  if (size > current) throw validationError(`'${param}' is ${size}, but the log holds ${current} entries`);
}

export function mount(router: AppRouter, deps: AppDeps): void {

  router.get('/v1/transparency/head', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    const head = await deps.read.run((sql) => latestHead(sql));
    if (!head) throw notFound('The transparency log has no signed tree head yet.');
    ctx.body = present(head);
  });

  router.get('/v1/transparency/heads', async (ctx: AppContext) => {
    const q = parseQuery(headsQuery, ctx);
    const day = q.date ?? date(Date.now());
    const heads = await deps.read.run((sql) => headsOfDay(sql, day));
    ctx.body = { date: day, count: heads.length, heads: heads.map((h) => ({ ...present(h), kept: h.kept })) } satisfies TransparencyHeadsResponse;
  });

  router.get('/v1/transparency/proof/inclusion', async (ctx: AppContext) => {
    const q = parseQuery(inclusionQuery, ctx);
    // the head, the entry and the proof from one server: a replica further on has a larger tree
    ctx.body = await deps.read.run(async (sql) => {
      let size = q.tree_size;
      if (size === undefined) {
        size = (await latestHead(sql))?.treeSize;
        if (size === undefined) throw notFound("The transparency log has no signed tree head yet: give 'tree_size'.");
      } else {
        await withinLog(sql, size, 'tree_size');
      }
      const entry = await entryById(sql, q.id);
      if (!entry) throw notFound(`No entry '${q.id}' in the transparency log.`);
      if (entry.leafIndex >= size) throw notFound(`Entry '${q.id}' is leaf ${entry.leafIndex}: it is not in the tree of ${size} entries, only in later ones.`);
      return {
        id: entry.id,
        leaf_index: entry.leafIndex,
        tree_size: size,
        entry: entry.entry,
        leaf_hash: entry.leafHash,
        audit_path: await inclusionProofOf(sql, entry.leafIndex, size),
      } satisfies TransparencyInclusionResponse;
    });
  });

  router.get('/v1/transparency/proof/consistency', async (ctx: AppContext) => {
    const q = parseQuery(consistencyQuery, ctx);
    if (q.first > q.second) throw validationError(`'first' (${q.first}) must not be larger than 'second' (${q.second})`);
    const proof = await deps.read.run(async (sql) => {
      await withinLog(sql, q.second, 'second');
      return consistencyProofOf(sql, q.first, q.second);
    });
    ctx.body = { first: q.first, second: q.second, proof } satisfies TransparencyConsistencyResponse;
  });
}
