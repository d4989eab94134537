-- bench store, schema version 7: indexes for reading big runs quickly
-- (bench view, bench report). No table changes.
--
-- attempts_metrics covers every column a report reads of an attempt, so
-- that a run's attempts are read without touching their rows (each holds
-- its tool list and is larger than a page). The partial indexes hold only
-- the denied tool calls and the cut turns, which a report counts.

CREATE INDEX attempts_metrics ON attempts (run_id, arm, task_id, idx, id, status, stop_reason, reward,
    advantage, advantage_method, turns, tool_calls, prompt_tokens, completion_tokens, wall_ms,
    model_ms, tool_ms, test_ms, harness_ms);

CREATE INDEX tool_calls_denied ON tool_calls (attempt_id) WHERE decision = 'deny';

CREATE INDEX turns_truncated ON turns (attempt_id) WHERE truncated = 1;
