-- bench store, schema version 9: the carried files of an attempt are
-- listed up to a bound, like the left-out ones; carried_more counts the
-- rest (an agent that writes a million files does not make a million-row
-- JSON list in the store).

ALTER TABLE attempt_changes ADD COLUMN carried_more INTEGER NOT NULL DEFAULT 0;
