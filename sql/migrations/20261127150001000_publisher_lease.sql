-- Up Migration
-- Several pipeline processes, one publisher (docs/decisions.md, "One publisher at a time").

-- The publisher's lease: one row. A pipeline process holds it while `expires_at` is ahead and
-- renews it every few seconds; another takes it only once it has expired, with the next `token`.
-- Every publishing transaction reads the row FOR SHARE with its own token (pipeline/lease.ts
-- fence): a process whose lease was taken over (it froze, its renewals stopped) finds another
-- token and stores nothing, and a takeover waits for the holder's transactions under way.
CREATE TABLE publisher_lease (
  id          smallint    PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  token       bigint      NOT NULL CHECK (token > 0),
  holder      text        NOT NULL,
  host        text        NOT NULL,
  pid         integer     NOT NULL,
  taken_at    timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL
);

-- The processes that collect (and the one that publishes): each writes its row every few seconds
-- (last_seen) and deletes it when it stops; health, /status and the metrics read who is there.
CREATE TABLE processes (
  id          text        PRIMARY KEY,
  host        text        NOT NULL,
  pid         integer     NOT NULL,
  role        text        NOT NULL CHECK (role IN ('all', 'pipeline')),
  venues      jsonb       NOT NULL,
  version     text        NOT NULL,
  started_at  timestamptz NOT NULL,
  last_seen   timestamptz NOT NULL
);

-- Signed tree heads only go forward: a head's tree is larger than the latest head's, or the same
-- tree as the first head of a new UTC day (one head per UTC day, docs/methodology.md); never
-- smaller, never the same tree twice in a day, never timed before the latest. Enforced here as
-- well as by the one publisher, so that no process, however stale, can make the log seem to shrink
-- to a monitor. Inserts are serialised by an advisory lock held to the end of their transaction,
-- so two at once cannot both pass against the same latest head.
CREATE FUNCTION transparency_heads_forward() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  last transparency_heads;
BEGIN
  PERFORM pg_advisory_xact_lock(9162002);
  SELECT * INTO last FROM transparency_heads ORDER BY signed_at DESC, id DESC LIMIT 1;
  IF FOUND AND (
       NEW.signed_at < last.signed_at
    OR NEW.tree_size < last.tree_size
    OR (NEW.tree_size = last.tree_size AND (NEW.signed_at AT TIME ZONE 'UTC')::date = (last.signed_at AT TIME ZONE 'UTC')::date)
  ) THEN
    RAISE EXCEPTION 'a signed head goes forward: tree % at % after tree % at % refused', NEW.tree_size, NEW.signed_at, last.tree_size, last.signed_at
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER transparency_heads_forward BEFORE INSERT ON transparency_heads
  FOR EACH ROW EXECUTE FUNCTION transparency_heads_forward();

-- Down Migration
DROP TRIGGER transparency_heads_forward ON transparency_heads;
DROP FUNCTION transparency_heads_forward();
DROP TABLE processes;
DROP TABLE publisher_lease;
