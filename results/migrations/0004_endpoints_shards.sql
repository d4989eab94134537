-- bench store, schema version 4: runs spread over several model servers
-- and over several processes (docs/scale.md).
--   turns.endpoint     the model server (its URL) that answered the turn;
--                      '' for turns stored before version 4.
--   runs.shard         "I/N" when the run holds only shard I of N of its
--                      plan (bench run --shard), '' for a whole run or one
--                      merged back together by bench merge.
--   runs.model_digest  what the model servers said of the model's weights
--                      when the run started: Ollama's digest, or the
--                      identity an OpenAI-compatible server gives in
--                      /v1/models; '' when unknown.

ALTER TABLE turns ADD COLUMN endpoint TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN shard TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN model_digest TEXT NOT NULL DEFAULT '';
