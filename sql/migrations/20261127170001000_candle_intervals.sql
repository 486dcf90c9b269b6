-- Up Migration
-- A row that names a candle interval names one of the list's (lib/intervals.ts), checked when it is
-- written against candle_width(), which is generated from the list with the repeatable files
-- (lib/db/intervals-sql.ts); the CHECK constraints that spelled the intervals out are dropped. So a
-- new interval is an entry in the list, not a migration. (PL/pgSQL resolves candle_width when a row
-- is written, after the repeatable files have made it.)
ALTER TABLE settled_values DROP CONSTRAINT settled_values_interval_check;
ALTER TABLE month_files DROP CONSTRAINT month_files_interval_check;
ALTER TABLE restatements DROP CONSTRAINT restatements_subject_check;

-- `interval` (settled_values, month_files): an interval of the list
CREATE FUNCTION refuse_unknown_interval() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF candle_width(NEW.interval) IS NULL THEN
    RAISE EXCEPTION 'new row for relation "%" names no candle interval: %', TG_TABLE_NAME, NEW.interval
      USING ERRCODE = 'check_violation', HINT = 'the intervals are those of lib/intervals.ts';
  END IF;
  RETURN NEW;
END $$;

-- `subject` (restatements): candle_<interval> for an interval of the list, or fixing
CREATE FUNCTION refuse_unknown_subject() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.subject IS DISTINCT FROM 'fixing' AND candle_width(substring(NEW.subject FROM '^candle_(.+)$')) IS NULL THEN
    RAISE EXCEPTION 'new row for relation "%" names no restatement subject: %', TG_TABLE_NAME, NEW.subject
      USING ERRCODE = 'check_violation', HINT = 'candle_<interval> (lib/intervals.ts) or fixing';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER settled_values_interval BEFORE INSERT OR UPDATE OF interval ON settled_values FOR EACH ROW EXECUTE FUNCTION refuse_unknown_interval();
CREATE TRIGGER month_files_interval BEFORE INSERT OR UPDATE OF interval ON month_files FOR EACH ROW EXECUTE FUNCTION refuse_unknown_interval();
CREATE TRIGGER restatements_subject BEFORE INSERT ON restatements FOR EACH ROW EXECUTE FUNCTION refuse_unknown_subject();

-- Down Migration
-- (the dropped CHECKs are not put back: rows of an interval added since would violate them)
DROP TRIGGER restatements_subject ON restatements;
DROP TRIGGER month_files_interval ON month_files;
DROP TRIGGER settled_values_interval ON settled_values;
DROP FUNCTION refuse_unknown_subject();
DROP FUNCTION refuse_unknown_interval();
