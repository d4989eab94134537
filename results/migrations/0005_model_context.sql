-- bench store, schema version 5: the model's own context length beside each
-- overhead measurement. Ollama lowers a num_ctx above it to it without
-- telling the client and then cuts prompts there, so the context a run
-- really had is min(num_ctx, model_context) (docs/overhead.md). 0 means
-- unknown (the server did not say, or the run predates this version).

ALTER TABLE overhead ADD COLUMN model_context INTEGER NOT NULL DEFAULT 0 CHECK (model_context >= 0);
