-- Up Migration
-- Each release of the repeatable SQL objects (sql/aggregates, functions, views) applied to this
-- database, by its build (lib/db/sql-files.ts buildOf: a digest of every file's substance), newest
-- applied_at last. A process whose build is here but not the newest runs older SQL than the
-- database's: it never applies it (lib/db/migrate.ts), so processes of two versions never rebuild
-- the aggregates against each other.
CREATE TABLE sql_builds (
  build       text        PRIMARY KEY,
  applied_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Down Migration
DROP TABLE sql_builds;
