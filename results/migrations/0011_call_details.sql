-- bench store, schema version 11: what an MCP call recorded beside its
-- observation.
--
-- tool_calls.details_json is the JSON a tool kept of a call besides the
-- observation the model read (agent.Result.Details): for an MCP tool its
-- structured content (checked against the tool's outputSchema, if any)
-- and the last progress the server reported, with how many times; for a
-- server's resource reader the URI read. NULL when there is nothing.
-- Never shown to the model.

ALTER TABLE tool_calls ADD COLUMN details_json TEXT;
