-- Up Migration
-- The transparency log's tables refuse changes with the trigger function every append-only table
-- uses (refuse_change, 20261124100001000_bundles.sql), not a copy of their own.
DROP TRIGGER transparency_entries_append_only ON transparency_entries;
DROP TRIGGER transparency_entries_no_truncate ON transparency_entries;
DROP TRIGGER transparency_nodes_append_only ON transparency_nodes;
DROP TRIGGER transparency_nodes_no_truncate ON transparency_nodes;
CREATE TRIGGER transparency_entries_append_only BEFORE UPDATE OR DELETE ON transparency_entries FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER transparency_entries_no_truncate BEFORE TRUNCATE ON transparency_entries FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER transparency_nodes_append_only BEFORE UPDATE OR DELETE ON transparency_nodes FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER transparency_nodes_no_truncate BEFORE TRUNCATE ON transparency_nodes FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
DROP FUNCTION transparency_is_append_only();

-- Down Migration
CREATE FUNCTION transparency_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the transparency log is append-only: % on % refused', TG_OP, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;
DROP TRIGGER transparency_entries_append_only ON transparency_entries;
DROP TRIGGER transparency_entries_no_truncate ON transparency_entries;
DROP TRIGGER transparency_nodes_append_only ON transparency_nodes;
DROP TRIGGER transparency_nodes_no_truncate ON transparency_nodes;
CREATE TRIGGER transparency_entries_append_only BEFORE UPDATE OR DELETE ON transparency_entries FOR EACH ROW EXECUTE FUNCTION transparency_is_append_only();
CREATE TRIGGER transparency_entries_no_truncate BEFORE TRUNCATE ON transparency_entries FOR EACH STATEMENT EXECUTE FUNCTION transparency_is_append_only();
CREATE TRIGGER transparency_nodes_append_only BEFORE UPDATE OR DELETE ON transparency_nodes FOR EACH ROW EXECUTE FUNCTION transparency_is_append_only();
CREATE TRIGGER transparency_nodes_no_truncate BEFORE TRUNCATE ON transparency_nodes FOR EACH STATEMENT EXECUTE FUNCTION transparency_is_append_only();
