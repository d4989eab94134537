-- bench store, schema version 10: the index a report reads covers it again.
-- No table changes.
--
-- attempts_metrics (version 7) covered every column a report read of an
-- attempt until version 8 added attempts.denials and
-- attempts.truncated_turns, which a report reads too: since then SQLite
-- read each attempt through the table's own unique index and looked its
-- row up, one B-tree search per attempt. attempts_report is
-- attempts_metrics with the two counts, and replaces it: the same key
-- (run_id, arm, task_id, idx), so that a report's query and every query
-- attempts_metrics served (bench view's RunVersion) read it alone.

DROP INDEX attempts_metrics;

CREATE INDEX attempts_report ON attempts (run_id, arm, task_id, idx, id, status, stop_reason, reward,
    advantage, advantage_method, turns, tool_calls, prompt_tokens, completion_tokens, wall_ms,
    model_ms, tool_ms, test_ms, harness_ms, denials, truncated_turns);
