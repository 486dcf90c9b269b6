-- Up Migration
-- Compression of raw trades: at real volume (Binance's USDT legs: 1-2 million trades a day) the
-- uncompressed table and its indexes take ~240 MB per million trades; compressed, segmented by
-- venue and pair and ordered by time, ~27 MB (measured on TimescaleDB 2.28). Candles are built
-- from compressed chunks unchanged, and late trades still land in them (INSERT ... ON CONFLICT on
-- compressed chunks). Chunks are compressed once they are two days old, past the usual lateness.
-- On a server TimescaleDB's job scheduler runs the policy; the embedded database has no background
-- workers, so the pipeline runs the same job itself (pipeline/maintenance.ts).
ALTER TABLE trades SET (
  timescaledb.compress,
  timescaledb.compress_segmentby = 'exchange, pair',
  timescaledb.compress_orderby = 'time, trade_id'
);
DROP INDEX trades_pair_time; -- nothing reads trades by pair and time: candles come from the aggregates
SELECT add_compression_policy('trades', compress_after => INTERVAL '2 days');

-- Down Migration
SELECT remove_compression_policy('trades', if_exists => true);
ALTER TABLE trades SET (timescaledb.compress = false);
CREATE INDEX trades_pair_time ON trades (pair, time DESC);
