-- The address book: contacts and distribution lists. Records marked
-- applies_to_subtenants are visible (read-only) in every descendant tenant.
CREATE TABLE address_book_contacts (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code           TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    applies_to_subtenants BIGINT NOT NULL DEFAULT 0,
    doc                   TEXT NOT NULL,
    etag                  TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);
CREATE INDEX address_book_contacts_tenant ON address_book_contacts (tenant_code, id);

CREATE TABLE distribution_lists (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code           TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    applies_to_subtenants BIGINT NOT NULL DEFAULT 0,
    doc                   TEXT NOT NULL,
    etag                  TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);
CREATE INDEX distribution_lists_tenant ON distribution_lists (tenant_code, id);
