-- bench store, schema version 12: the reward as a task's own verifier
-- wrote it (Harbor's reward.txt or reward.json: a fraction, kept as is
-- beside the 0/1 that test_results.passed holds at bench's threshold), and
-- the other numeric keys of reward.json. NULL for bench's own tasks.

ALTER TABLE test_results ADD COLUMN reward_value REAL;
ALTER TABLE test_results ADD COLUMN metrics TEXT;
