-- bench store, schema version 13: exact token data for RL trainers.
--   turns.model_digest  the weights that served the turn as its endpoint
--                       told them (Ollama's digest, an OpenAI-compatible
--                       server's /v1/models identity); '' when unknown.
--   turn_tokens         one row per turn of an attempt run with token data
--                       asked for (bench run --tokens, bench serve): what
--                       the model server said of the turn's tokens.
--
--   token_prompts       first prompts (system prompt, tools, task) as ids,
--                       each distinct one once: the G attempts of a group
--                       start with the same.
--
-- Ids are kept compact: a turn's prompt is stored as the count of its
-- leading ids that equal the previous turn's prompt and completion
-- (prompt_shared), or a first prompt of token_prompts (prompt_ref), and
-- the ids after them, so that a conversation's prompts are not stored
-- again every turn, nor a group's first prompt for every attempt. Ids are
-- unsigned LEB128 varints, logprobs little-endian float32 (docs/schema.md).

ALTER TABLE turns ADD COLUMN model_digest TEXT NOT NULL DEFAULT '';

CREATE TABLE token_prompts (
    id   INTEGER PRIMARY KEY,
    hash BLOB NOT NULL UNIQUE,               -- the first 16 bytes of the ids' SHA-256
    ids  BLOB NOT NULL
);

CREATE TABLE turn_tokens (
    attempt_id     INTEGER NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
    turn_idx       INTEGER NOT NULL,
    source         TEXT NOT NULL,            -- openai | ollama | none
    exact          INTEGER NOT NULL CHECK (exact IN (0, 1)),
    problem        TEXT NOT NULL DEFAULT '', -- why not exact
    prompt_len     INTEGER,                  -- ids in the whole prompt; NULL: none given
    prompt_ref     INTEGER REFERENCES token_prompts (id), -- the prompt starts with these ids
    prompt_shared  INTEGER NOT NULL DEFAULT 0,
    prompt_ids     BLOB,                     -- the prompt's ids after the shared ones
    completion_ids BLOB,                     -- NULL: none given
    logprobs       BLOB,                     -- NULL: none given
    token_texts    TEXT,                     -- JSON array of the sampled tokens as text (Ollama)
    sampling       TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (attempt_id, turn_idx)
);
