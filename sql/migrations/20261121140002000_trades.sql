-- Up Migration
-- Raw trades as each venue reported them. `time` is the venue's own trade time: candles are
-- bucketed by it, never by arrival (ingested_at). A trade is identified by (exchange, pair,
-- trade_id); the unique index must include the partitioning column, and a venue never changes a
-- trade's time, so (exchange, pair, trade_id, time) stores each trade once.
CREATE TABLE trades (
  time         timestamptz NOT NULL,
  exchange     text        NOT NULL,
  pair         text        NOT NULL REFERENCES pairs (pair),
  trade_id     text        NOT NULL,
  price        numeric     NOT NULL CHECK (price > 0),
  amount       numeric     NOT NULL CHECK (amount > 0),
  side         text        CHECK (side IN ('buy', 'sell')),  -- the taker's side
  ingested_at  timestamptz NOT NULL DEFAULT now()
);
SELECT create_hypertable('trades', by_range('time', INTERVAL '1 day'));
CREATE UNIQUE INDEX trades_identity ON trades (exchange, pair, trade_id, time);
CREATE INDEX trades_pair_time ON trades (pair, time DESC);

-- Down Migration
DROP TABLE trades;
