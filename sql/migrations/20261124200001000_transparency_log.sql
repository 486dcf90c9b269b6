-- Up Migration
-- The transparency log (lib/transparency/log.ts): every certificate, fixing and restatement
-- afrates issues is a leaf of an append-only Merkle tree built as RFC 9162 builds it. Signed tree
-- heads let anyone check later that no entry was changed or dropped (GET /v1/transparency/...).

-- One row per leaf, in order. `entry` is the entry's canonical JSON, the bytes that are hashed:
-- leaf_hash = SHA-256(0x00 || entry).
CREATE TABLE transparency_entries (
  leaf_index   bigint      PRIMARY KEY CHECK (leaf_index >= 0),
  entry_id     text        NOT NULL UNIQUE CHECK (length(entry_id) BETWEEN 1 AND 200),
  kind         text        NOT NULL CHECK (kind IN ('certificate', 'fixing', 'restatement')),
  entry        text        NOT NULL,
  leaf_hash    bytea       NOT NULL CHECK (length(leaf_hash) = 32),
  appended_at  timestamptz NOT NULL DEFAULT now()
);

-- The hash of every complete, aligned subtree above the leaves: level l >= 1, index i covers
-- leaves [i * 2^l, (i + 1) * 2^l). Written once, by the append that completes it. Roots and proofs
-- are folded from these (at most one per level), never recomputed from the leaves.
CREATE TABLE transparency_nodes (
  level  smallint NOT NULL CHECK (level BETWEEN 1 AND 62),
  idx    bigint   NOT NULL CHECK (idx >= 0),
  hash   bytea    NOT NULL CHECK (length(hash) = 32),
  PRIMARY KEY (level, idx)
);

CREATE FUNCTION transparency_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the transparency log is append-only: % on % refused', TG_OP, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER transparency_entries_append_only BEFORE UPDATE OR DELETE ON transparency_entries
  FOR EACH ROW EXECUTE FUNCTION transparency_is_append_only();
CREATE TRIGGER transparency_entries_no_truncate BEFORE TRUNCATE ON transparency_entries
  FOR EACH STATEMENT EXECUTE FUNCTION transparency_is_append_only();
CREATE TRIGGER transparency_nodes_append_only BEFORE UPDATE OR DELETE ON transparency_nodes
  FOR EACH ROW EXECUTE FUNCTION transparency_is_append_only();
CREATE TRIGGER transparency_nodes_no_truncate BEFORE TRUNCATE ON transparency_nodes
  FOR EACH STATEMENT EXECUTE FUNCTION transparency_is_append_only();

-- Signed tree heads. `signed_payload` is the exact text signed: canonical JSON of root_hash (hex),
-- timestamp and tree_size. Every head of the current UTC day is kept until the day ends; then the
-- day's last is kept for good (`kept`) and the others are pruned, when the next head is written.
CREATE TABLE transparency_heads (
  id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tree_size       bigint      NOT NULL CHECK (tree_size >= 0),
  root_hash       bytea       NOT NULL CHECK (length(root_hash) = 32),
  signed_at       timestamptz NOT NULL,
  signed_payload  text        NOT NULL,
  signature       text        NOT NULL,
  key_id          text        NOT NULL,
  kept            boolean     NOT NULL DEFAULT false
);
CREATE INDEX transparency_heads_signed_at ON transparency_heads (signed_at);

-- A head is never changed, and a kept one never deleted: the only update marks a head kept.
CREATE FUNCTION transparency_heads_are_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF NOT OLD.kept THEN
      RETURN OLD;
    END IF;
  ELSIF TG_OP = 'UPDATE' THEN
    IF NOT OLD.kept AND NEW.kept
       AND (NEW.id, NEW.tree_size, NEW.root_hash, NEW.signed_at, NEW.signed_payload, NEW.signature, NEW.key_id)
         = (OLD.id, OLD.tree_size, OLD.root_hash, OLD.signed_at, OLD.signed_payload, OLD.signature, OLD.key_id) THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION 'signed tree heads stay as signed, and kept ones stay: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER transparency_heads_kept BEFORE UPDATE OR DELETE ON transparency_heads
  FOR EACH ROW EXECUTE FUNCTION transparency_heads_are_kept();
CREATE TRIGGER transparency_heads_no_truncate BEFORE TRUNCATE ON transparency_heads
  FOR EACH STATEMENT EXECUTE FUNCTION transparency_heads_are_kept();

-- Down Migration
DROP TABLE transparency_heads;
DROP FUNCTION transparency_heads_are_kept();
DROP TABLE transparency_nodes;
DROP TABLE transparency_entries;
DROP FUNCTION transparency_is_append_only();
