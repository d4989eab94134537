-- bench store, schema version 8: what every attempt repeated is stored once.
--
-- * tool_lists holds each distinct tool list (the tools exactly as sent to
--   the model) once; attempts.tool_list_id points at it, in place of the
--   attempts.tools_json that every attempt carried (the same 4 KB list in
--   every row of a run: a fifth of a large file).
-- * A tool message's text is its call's result: messages.tool_call_idx
--   names the call (tool_calls.idx of the same attempt) and content is ''.
--   A tool message whose text is not its call's result keeps its content.
--   The view conversation gives every message with its text.
-- * attempts.denials and attempts.truncated_turns count what reports read
--   per attempt, as attempts.turns and attempts.tool_calls already do.
-- * attempts_by_run_status serves the per-run counts of `bench runs`.
--
-- Nothing is lost: every tools_json is one tool_lists row, and a tool
-- message is emptied only where its call's result holds the same text.
-- The file does not shrink by itself: `sqlite3 bench.db VACUUM` gives the
-- freed pages back.

CREATE TABLE tool_lists (
    id         INTEGER PRIMARY KEY,
    tools_json TEXT NOT NULL UNIQUE
);

INSERT INTO tool_lists (tools_json)
SELECT tools_json FROM attempts GROUP BY tools_json ORDER BY min(id);

ALTER TABLE attempts ADD COLUMN tool_list_id INTEGER REFERENCES tool_lists (id);
ALTER TABLE attempts ADD COLUMN denials INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN truncated_turns INTEGER NOT NULL DEFAULT 0;

UPDATE attempts SET
    tool_list_id = (SELECT l.id FROM tool_lists l WHERE l.tools_json = attempts.tools_json),
    denials = (SELECT count(*) FROM tool_calls c WHERE c.attempt_id = attempts.id AND c.decision = 'deny'),
    truncated_turns = (SELECT count(*) FROM turns u WHERE u.attempt_id = attempts.id AND u.truncated = 1);

ALTER TABLE attempts DROP COLUMN tools_json;

CREATE INDEX attempts_by_run_status ON attempts (run_id, status, reward);

ALTER TABLE messages ADD COLUMN tool_call_idx INTEGER;

-- The k-th tool message of an attempt answers its k-th call (idx k): the
-- agent loop appends one of each, in order.
UPDATE messages SET tool_call_idx = k.call_idx, content = ''
FROM (SELECT attempt_id, idx,
             row_number() OVER (PARTITION BY attempt_id ORDER BY idx) - 1 AS call_idx
      FROM messages WHERE role = 'tool') AS k
JOIN tool_calls c ON c.attempt_id = k.attempt_id AND c.idx = k.call_idx
WHERE messages.attempt_id = k.attempt_id AND messages.idx = k.idx
  AND c.result = messages.content;

CREATE VIEW conversation AS
SELECT m.attempt_id, m.idx, m.role,
       CASE WHEN m.tool_call_idx IS NULL THEN m.content ELSE coalesce(c.result, m.content) END AS content,
       m.thinking, m.tool_calls_json, m.tool_name, m.tool_call_id, m.tool_call_idx
FROM messages m
LEFT JOIN tool_calls c ON c.attempt_id = m.attempt_id AND c.idx = m.tool_call_idx;
