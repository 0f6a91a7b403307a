-- Web Push subscriptions (issue 46 §2, DESIGN §12; docs/api.md "Push"): a browser's
-- PushSubscription for one user at one device. One row per endpoint (a re-POST of the
-- same endpoint updates it). No key to `devices`: a push goes to the subscriptions whose
-- user is the device's user at the time (joined then), so a stale row pushes nothing.
CREATE TABLE push_subscriptions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    user_id     BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    device_id   TEXT NOT NULL,
    endpoint    TEXT NOT NULL UNIQUE,
    -- The browser's keys, base64url as it gave them: the P-256 point and the auth secret.
    p256dh      TEXT NOT NULL,
    auth        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX push_subscriptions_device ON push_subscriptions (tenant_code, device_id);
CREATE INDEX push_subscriptions_user ON push_subscriptions (user_id);
