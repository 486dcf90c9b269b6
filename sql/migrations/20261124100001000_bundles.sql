-- Up Migration
-- Replication bundles: everything a certified rate was computed from (trades as stored, venues
-- left out and why, the synthetic price's inputs, parameters, methodology and software version),
-- frozen when the certificate is issued (pipeline/certify/). The certificate carries the SHA-256 of
-- the bundle's canonical JSON, signed; the bundle is kept gzip-compressed in parts of at most
-- 32 KB (the embedded database takes no statement over about 64 KB) and never changes: compression
-- and retention of raw trades do not touch it.
CREATE TABLE bundles (
  id          text        PRIMARY KEY,            -- the certificate's id (CERT-... or FIX-...)
  sha256      text        NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),  -- of the uncompressed JSON
  bytes       integer     NOT NULL CHECK (bytes > 0),                  -- uncompressed size
  parts       integer     NOT NULL CHECK (parts > 0),
  stored_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bundle_parts (
  id    text    NOT NULL REFERENCES bundles (id),
  part  integer NOT NULL CHECK (part >= 0),
  gzip  bytea   NOT NULL,                           -- the parts in order are one gzip stream
  PRIMARY KEY (id, part)
);

-- What is published is never changed or removed: one trigger function for every such table.
CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER bundles_append_only BEFORE UPDATE OR DELETE ON bundles FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER bundles_no_truncate BEFORE TRUNCATE ON bundles FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER bundle_parts_append_only BEFORE UPDATE OR DELETE ON bundle_parts FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER bundle_parts_no_truncate BEFORE TRUNCATE ON bundle_parts FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- Down Migration
DROP TABLE bundle_parts;
DROP TABLE bundles;
DROP FUNCTION refuse_change();
