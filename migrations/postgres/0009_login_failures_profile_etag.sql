-- Failed logins are counted per account AND client address: failures from one address
-- lock the account for that address only, so a stranger who knows an e-mail address
-- cannot lock its owner out. The users row keeps the account-wide summary
-- (FailedPasswordAttemptCount, FailedPasswordAttemptWindowStart, LastLockoutDate).
CREATE TABLE login_failures (
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client       TEXT NOT NULL,
    failed_count BIGINT NOT NULL DEFAULT 0,
    window_start BIGINT,
    locked_at    BIGINT,
    PRIMARY KEY (user_id, client)
);

-- Profiles get their own version (ETag / If-Match), like every other record.
ALTER TABLE users ADD COLUMN profile_etag TEXT NOT NULL DEFAULT 'initial';
UPDATE users SET profile_etag = substr(md5(random()::text || id::text), 1, 16);
