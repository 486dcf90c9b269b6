-- Up Migration
-- The month files of GET /v1/exports/candles (gzipped CSV and Parquet of one pair's candles of one
-- UTC month), made once the month is complete and kept here for every API process, each with the
-- digest of the candle rows it was made from (candle_page's rows, as candlesDigest hashes them) and
-- the id of the code that made it (api/month-files.ts monthFileMaker). A file is given out while
-- its month's rows still have that digest and the code serving it would make the same bytes; else
-- it is made again and takes its place. Derived bytes, not a published record: deleting rows here
-- only means files are made again.
CREATE TABLE month_files (
  pair        text        NOT NULL REFERENCES pairs (pair),
  interval    text        NOT NULL CHECK (interval IN ('5m', '1h', '1d')),
  month       date        NOT NULL CHECK (extract(day FROM month) = 1),
  format      text        NOT NULL CHECK (format IN ('csv', 'parquet')),
  rows_digest text        NOT NULL,
  maker       text        NOT NULL,
  bytes       bytea       NOT NULL,
  made_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pair, interval, month, format)
);

-- Down Migration
DROP TABLE month_files;
