-- bench store, schema version 3: what scoring rests on (docs/schema.md).
-- Hidden tests run in a fresh scoring folder on the agent's result; their
-- per-test report decides the reward; the run says whether its commands
-- were isolated.

-- 'bubblewrap ...' for an isolated run; 'none' for --sandbox off.
-- '' for runs stored before this version.
ALTER TABLE runs ADD COLUMN isolation TEXT NOT NULL DEFAULT '';

-- The task's per-test report form ('' for none: exit status alone).
ALTER TABLE tasks ADD COLUMN report TEXT NOT NULL DEFAULT '';

-- 'tests': the reward rests on per-test verdicts; 'exit_status': on the
-- exit status alone. report_error says why a report could not be read
-- (reward 0). tests_total and tests_passed count the recorded tests (or,
-- for a task without a record, the reported ones); NULL without a report.
ALTER TABLE test_results ADD COLUMN basis TEXT NOT NULL DEFAULT 'exit_status'
    CHECK (basis IN ('tests', 'exit_status'));
ALTER TABLE test_results ADD COLUMN report_error TEXT NOT NULL DEFAULT '';
ALTER TABLE test_results ADD COLUMN tests_total INTEGER;
ALTER TABLE test_results ADD COLUMN tests_passed INTEGER;

-- One row per test of an attempt's report, and per recorded test the
-- report left out (outcome 'missing'). recorded says which list of the
-- task's record the test is on ('' for none).
CREATE TABLE test_cases (
    attempt_id  INTEGER NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    test        TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK (outcome IN ('pass', 'fail', 'skip', 'missing')),
    recorded    TEXT NOT NULL DEFAULT '' CHECK (recorded IN ('', 'fail_to_pass', 'pass_to_pass')),
    duration_ms REAL NOT NULL DEFAULT 0,
    message     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (attempt_id, idx)
);

-- What of the agent's workspace was carried into scoring: the files
-- (JSON list of {path, kind, size}), a unified diff of them (cut at
-- diff_cut bytes dropped), and the changed paths left out with the reason
-- (JSON list of {path, reason}; left_out_more counts those not listed).
CREATE TABLE attempt_changes (
    attempt_id    INTEGER PRIMARY KEY REFERENCES attempts (id) ON DELETE CASCADE,
    carried_json  TEXT NOT NULL DEFAULT '[]',
    diff          TEXT NOT NULL DEFAULT '',
    diff_cut      INTEGER NOT NULL DEFAULT 0,
    left_out_json TEXT NOT NULL DEFAULT '[]',
    left_out_more INTEGER NOT NULL DEFAULT 0
);
