-- bench store, schema version 1. See docs/schema.md: this schema is a public
-- contract. Times are UTC text "YYYY-MM-DDTHH:MM:SS.sssZ"; durations carry
-- their unit in the column name (_ms, _ns); booleans are 0/1 integers.

CREATE TABLE runs (
    id                TEXT PRIMARY KEY,
    name              TEXT NOT NULL DEFAULT '',
    created_at        TEXT NOT NULL,
    model             TEXT NOT NULL,
    options_json      TEXT NOT NULL DEFAULT '{}',
    seed              INTEGER NOT NULL,
    attempts_per_task INTEGER NOT NULL CHECK (attempts_per_task >= 1),
    suite             TEXT NOT NULL DEFAULT '',
    suite_dir         TEXT NOT NULL DEFAULT '',
    config_json       TEXT NOT NULL DEFAULT '{}',
    status            TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted')),
    finished_at       TEXT,
    bench_version     TEXT NOT NULL DEFAULT ''
);

CREATE TABLE arms (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    idx         INTEGER NOT NULL,
    config_json TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, name)
);

CREATE TABLE tasks (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    id          TEXT NOT NULL,
    idx         INTEGER NOT NULL,
    dir         TEXT NOT NULL DEFAULT '',
    hash        TEXT NOT NULL DEFAULT '',
    instruction TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, id)
);

CREATE TABLE attempts (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id            TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    arm               TEXT NOT NULL,
    task_id           TEXT NOT NULL,
    idx               INTEGER NOT NULL CHECK (idx >= 0),
    seed              INTEGER NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('finished', 'infra_error', 'canceled')),
    stop_reason       TEXT NOT NULL DEFAULT '',
    reward            INTEGER CHECK (reward IS NULL OR (reward IN (0, 1) AND status = 'finished')),
    advantage         REAL,
    advantage_method  TEXT,
    turns             INTEGER NOT NULL DEFAULT 0,
    tool_calls        INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    wall_ms           REAL    NOT NULL DEFAULT 0,
    started_at        TEXT NOT NULL,
    finished_at       TEXT NOT NULL,
    tries             INTEGER NOT NULL DEFAULT 1,
    error             TEXT NOT NULL DEFAULT '',
    tools_json        TEXT NOT NULL DEFAULT '[]',
    UNIQUE (run_id, arm, task_id, idx),
    FOREIGN KEY (run_id, arm) REFERENCES arms (run_id, name),
    FOREIGN KEY (run_id, task_id) REFERENCES tasks (run_id, id)
);

CREATE TABLE turns (
    attempt_id        INTEGER NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
    idx               INTEGER NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    total_ns          INTEGER NOT NULL,
    load_ns           INTEGER NOT NULL,
    prompt_eval_ns    INTEGER NOT NULL,
    eval_ns           INTEGER NOT NULL,
    wall_ms           REAL    NOT NULL,
    done_reason       TEXT NOT NULL DEFAULT '',
    tool_calls        INTEGER NOT NULL DEFAULT 0,
    truncated         INTEGER NOT NULL DEFAULT 0 CHECK (truncated IN (0, 1)),
    PRIMARY KEY (attempt_id, idx)
);

CREATE TABLE messages (
    attempt_id      INTEGER NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
    idx             INTEGER NOT NULL,
    role            TEXT NOT NULL,
    content         TEXT NOT NULL DEFAULT '',
    thinking        TEXT NOT NULL DEFAULT '',
    tool_calls_json TEXT,
    tool_name       TEXT NOT NULL DEFAULT '',
    tool_call_id    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (attempt_id, idx)
);

CREATE TABLE tool_calls (
    attempt_id     INTEGER NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
    idx            INTEGER NOT NULL,
    turn_idx       INTEGER NOT NULL,
    tool           TEXT NOT NULL,
    origin         TEXT NOT NULL DEFAULT '',
    class          TEXT NOT NULL DEFAULT '',
    decision       TEXT NOT NULL DEFAULT '',
    rule           TEXT NOT NULL DEFAULT '',
    approver       TEXT NOT NULL DEFAULT '',
    arguments_json TEXT NOT NULL DEFAULT '{}',
    result         TEXT NOT NULL DEFAULT '',
    is_error       INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    error_kind     TEXT NOT NULL DEFAULT '',
    duration_ms    REAL    NOT NULL DEFAULT 0,
    PRIMARY KEY (attempt_id, idx)
);

CREATE INDEX tool_calls_by_tool ON tool_calls (tool);

CREATE TABLE test_results (
    attempt_id  INTEGER PRIMARY KEY REFERENCES attempts (id) ON DELETE CASCADE,
    command     TEXT NOT NULL,
    exit_code   INTEGER NOT NULL,
    passed      INTEGER NOT NULL CHECK (passed IN (0, 1)),
    timed_out   INTEGER NOT NULL CHECK (timed_out IN (0, 1)),
    output      TEXT NOT NULL DEFAULT '',
    duration_ms REAL    NOT NULL
);

CREATE TABLE attempt_servers (
    attempt_id       INTEGER NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
    idx              INTEGER NOT NULL,
    name             TEXT NOT NULL,
    protocol_version TEXT NOT NULL DEFAULT '',
    server_name      TEXT NOT NULL DEFAULT '',
    server_version   TEXT NOT NULL DEFAULT '',
    stderr           TEXT NOT NULL DEFAULT '',
    catalog_json     TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (attempt_id, idx)
);
