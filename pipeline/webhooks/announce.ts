// The webhook events of what the publishing step issues (lib/webhooks/events.ts): a fixing
// published, a settled value restated. Written to the outbox in the transaction that stores them,
// so an event exists exactly when what it announces does; the delivery worker takes it from there.
import type { Sql, Tx } from '../../lib/db/connect.js';
import { numeric, restatementId, timestamp } from '../../lib/format.js';
import { emitEvent } from '../../lib/webhooks/events.js';
import type { Issued } from '../certify/issue.js';
import type { Restatement } from '../restate.js';

export async function announceIssued(tx: Tx, issued: readonly Issued[]): Promise<void> {
  for (const i of issued) {
    if (i.kind !== 'fixing') continue;
    await emitEvent(tx as unknown as Sql, { type: 'fixing.published', pair: i.pair, data: { fixing_id: i.id, pair: i.pair, time: i.time, rate: i.rate === null ? null : numeric(i.rate), url: `/v1/fixings/${i.pair}/${i.date}` } });
  }
}

export async function announceRestatement(tx: Tx, r: Restatement): Promise<void> {
  await emitEvent(tx as unknown as Sql, {
    type: 'restatement',
    pair: r.pair,
    data: { id: restatementId(r.id), pair: r.pair, subject: r.subject, time: timestamp(r.time), fixing_id: r.ref, previous: numeric(r.previous), restated: numeric(r.restated), change_pct: numeric(r.changePct), late_trades: r.lateTrades },
  });
}
