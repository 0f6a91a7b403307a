-- A login attempt takes its place in the address's window before its password is
-- verified (`pending` counts those being verified; `failed_count` includes them), so
-- parallel guesses cannot verify more than the threshold. A locked address allows one
-- verification per lock (`probed_at`), which tells the right password that it is locked.
ALTER TABLE login_failures ADD COLUMN pending BIGINT NOT NULL DEFAULT 0;
ALTER TABLE login_failures ADD COLUMN probed_at BIGINT;
