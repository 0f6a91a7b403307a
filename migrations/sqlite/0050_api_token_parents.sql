-- A token minted with a token (issue 42) is its parent's child: it may not outlive it
-- (its expiry is capped at the parent's when it is issued) and revoking the parent
-- revokes every token minted from it, down the line. Tokens issued by a user have none.
ALTER TABLE api_tokens ADD COLUMN parent_id BIGINT REFERENCES api_tokens (id);
CREATE INDEX api_tokens_parent ON api_tokens (parent_id) WHERE parent_id IS NOT NULL;
