-- bench store, schema version 2: the prompt-token overhead of each arm's
-- tools, measured once at the start of a run (docs/overhead.md), so that a
-- report can put "these tools cost N tokens a request" beside the pass rate.
-- Tokens are Ollama's prompt_eval_count of a minimal one-word request; an
-- overhead is a difference with the same request offering no tools.

CREATE TABLE overhead (
    run_id          TEXT NOT NULL,
    arm             TEXT NOT NULL,
    model           TEXT NOT NULL,
    num_ctx         INTEGER NOT NULL CHECK (num_ctx > 0),
    measured_at     TEXT NOT NULL,
    baseline_tokens INTEGER NOT NULL,
    prompt_tokens   INTEGER NOT NULL,
    tokens          INTEGER NOT NULL,
    sum_of_tools    INTEGER NOT NULL,
    truncated       INTEGER NOT NULL DEFAULT 0 CHECK (truncated IN (0, 1)),
    PRIMARY KEY (run_id, arm),
    FOREIGN KEY (run_id, arm) REFERENCES arms (run_id, name) ON DELETE CASCADE
);

CREATE TABLE overhead_items (
    run_id        TEXT NOT NULL,
    arm           TEXT NOT NULL,
    idx           INTEGER NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('set', 'tool')),
    name          TEXT NOT NULL,
    tool_set      TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    tokens        INTEGER NOT NULL,
    truncated     INTEGER NOT NULL DEFAULT 0 CHECK (truncated IN (0, 1)),
    PRIMARY KEY (run_id, arm, idx),
    FOREIGN KEY (run_id, arm) REFERENCES overhead (run_id, arm) ON DELETE CASCADE
);
