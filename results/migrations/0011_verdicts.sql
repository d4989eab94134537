-- bench store, schema version 11: what each reward rests on, and what in
-- the carried change a person should read (docs/schema.md).
--
-- tasks.verdict is the kind of verdict the task's scoring gives (golden,
-- black_box, in_process_canary, in_process, exit_status), from its
-- settings when the run was planned; tasks.tags its tags (a JSON list),
-- so that a report can tell an impossible task (tag "impossible").
ALTER TABLE tasks ADD COLUMN verdict TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';

-- attempts.verdict is the kind of verdict the attempt's reward rests on
-- ('' when it was not scored); attempts.flags the distinct suspicion flags
-- of its carried change, sorted, comma-separated ('' for none). Flags
-- never change a reward.
ALTER TABLE attempts ADD COLUMN verdict TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN flags TEXT NOT NULL DEFAULT '';

-- The out-of-process cases of an attempt's scoring (golden cases,
-- black-box checks) and how many passed; NULL without any. Their
-- outcomes are rows of test_cases named golden::<case> and check::<id>.
ALTER TABLE test_results ADD COLUMN cases_total INTEGER;
ALTER TABLE test_results ADD COLUMN cases_passed INTEGER;

-- One row per suspicion found in an attempt's carried change: the flag,
-- the file and line, and what was seen.
CREATE TABLE attempt_flags (
    attempt_id INTEGER NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,
    flag       TEXT NOT NULL,
    path       TEXT NOT NULL DEFAULT '',
    line       INTEGER NOT NULL DEFAULT 0,
    detail     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (attempt_id, idx)
);

-- The report reads the two new columns of every attempt: the covering
-- index holds them too.
DROP INDEX attempts_report;
CREATE INDEX attempts_report ON attempts (run_id, arm, task_id, idx, id, status, stop_reason, reward,
    advantage, advantage_method, turns, tool_calls, prompt_tokens, completion_tokens, wall_ms,
    model_ms, tool_ms, test_ms, harness_ms, denials, truncated_turns, verdict, flags);
