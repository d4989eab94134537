-- bench store, schema version 14: a run's summary, computed once and kept,
-- so that bench view shows a run of any size without reading every attempt
-- (docs/schema.md).
--
-- runs.revision counts the changes to what a run's report is computed
-- from: the triggers below add one for every row of the run's attempts,
-- arms, tasks and tool overhead written, updated (an advantage stored) or
-- deleted, and for every change of the run's own row. A run's version (its status, finish time and revision) is then one
-- row's read, whatever the run's size.
ALTER TABLE runs ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER attempts_revision_insert AFTER INSERT ON attempts
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER attempts_revision_update AFTER UPDATE ON attempts
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER attempts_revision_delete AFTER DELETE ON attempts
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = OLD.run_id;
END;

CREATE TRIGGER overhead_revision_insert AFTER INSERT ON overhead
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER overhead_revision_update AFTER UPDATE ON overhead
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER overhead_revision_delete AFTER DELETE ON overhead
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = OLD.run_id;
END;

CREATE TRIGGER overhead_items_revision_insert AFTER INSERT ON overhead_items
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER overhead_items_revision_update AFTER UPDATE ON overhead_items
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER overhead_items_revision_delete AFTER DELETE ON overhead_items
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = OLD.run_id;
END;

CREATE TRIGGER arms_revision_insert AFTER INSERT ON arms
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER arms_revision_update AFTER UPDATE ON arms
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER arms_revision_delete AFTER DELETE ON arms
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = OLD.run_id;
END;

CREATE TRIGGER tasks_revision_insert AFTER INSERT ON tasks
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER tasks_revision_update AFTER UPDATE ON tasks
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER tasks_revision_delete AFTER DELETE ON tasks
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = OLD.run_id;
END;

-- Any change of a run's own row but its revision (its status, finish time,
-- isolation...) is a change too.
CREATE TRIGGER runs_revision_update AFTER UPDATE ON runs WHEN NEW.revision = OLD.revision
BEGIN
    UPDATE runs SET revision = revision + 1 WHERE id = NEW.id;
END;

-- run_summaries holds one run's summary (a JSON object: the report without
-- its per-task rows, the attempts' counts by arm, status, reward and stop
-- reason, and the histograms of the run page) and its attempts packed
-- (the columns a report reads, docs/schema.md), written when the run
-- stops (FinishRun) at the version it was computed at. A summary whose
-- version is not the run's current one is stale and not used.
CREATE TABLE run_summaries (
    run_id          TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    version         TEXT NOT NULL,
    summary_json    TEXT NOT NULL,
    attempts_packed BLOB NOT NULL
);
