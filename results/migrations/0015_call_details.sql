-- bench store, schema version 15: what an MCP call recorded beside its
-- observation, and the tool list of a turn after an MCP server changed it.
--
-- tool_calls.details_json is the JSON a tool kept of a call besides the
-- observation the model read (agent.Result.Details): for an MCP tool its
-- structured content (checked against the tool's outputSchema, if any)
-- and the last progress the server reported, with how many times; for a
-- server's resource reader the URI read. NULL when there is nothing.
-- Never shown to the model.

ALTER TABLE tool_calls ADD COLUMN details_json TEXT;

-- turns.tool_list_id is the tool list sent with a turn when it is not the
-- attempt's (attempts.tool_list_id): an MCP server announced a new tool
-- list, read before that turn (agent.Trajectory.ToolChanges). NULL: the
-- attempt's list. A turn's tool overhead is its own list's.

ALTER TABLE turns ADD COLUMN tool_list_id INTEGER REFERENCES tool_lists (id);
