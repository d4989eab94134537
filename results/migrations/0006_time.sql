-- bench store, schema version 6: where an attempt's time went. Each
-- attempt's wall time from its start to its score, split into the model's
-- turns (model_ms: the requests, from sending to the whole reply), its
-- tool calls (tool_ms), the hidden tests (test_ms: the scoring runs, a
-- re-run of the reference solution's tests after a timeout included) and
-- the rest, the harness's own (harness_ms: workspace and environment
-- views, MCP servers starting and stopping, collecting the change,
-- storing). NULL for attempts stored before this version.
ALTER TABLE attempts ADD COLUMN model_ms REAL;
ALTER TABLE attempts ADD COLUMN tool_ms REAL;
ALTER TABLE attempts ADD COLUMN test_ms REAL;
ALTER TABLE attempts ADD COLUMN harness_ms REAL;

-- For hidden tests that ran past their timeout: how long the reference
-- solution's tests took right after in the same prepared environment (a
-- timeout of both is the machine's, not the agent's: an infra_error).
ALTER TABLE test_results ADD COLUMN ref_duration_ms REAL;
