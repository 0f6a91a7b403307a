-- Itineraries (DESIGN.md §6): the itinerary, its segments (flights, journeys, hotels in
-- one table), travelers, the tenant's risk-region catalogue and the regions attached to
-- itineraries. Times are BIGINT microseconds since the Unix epoch (UTC).

CREATE TABLE risk_regions (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code           TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    -- Chosen by the client; unique within the tenant, case-sensitive.
    geometry_id           TEXT NOT NULL,
    name                  TEXT NOT NULL,
    risk_level            BIGINT NOT NULL,
    -- 1: visible (read-only) in every descendant tenant.
    applies_to_subtenants BIGINT NOT NULL DEFAULT 0,
    -- Bounding box of the polygon: a cheap first test before the polygon's own.
    min_lat               DOUBLE PRECISION NOT NULL,
    max_lat               DOUBLE PRECISION NOT NULL,
    min_lon               DOUBLE PRECISION NOT NULL,
    max_lon               DOUBLE PRECISION NOT NULL,
    doc                   TEXT NOT NULL,
    etag                  TEXT NOT NULL,
    updated_at            BIGINT NOT NULL,
    UNIQUE (tenant_code, geometry_id)
);
CREATE INDEX risk_regions_inherited ON risk_regions (applies_to_subtenants, tenant_code);

CREATE TABLE itineraries (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code    TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    -- The user who created it (null once that user is deleted).
    owner_user_id  BIGINT REFERENCES users (id) ON DELETE SET NULL,
    -- 0 NoDecision, 1 Approved, 2 Declined.
    approval_state BIGINT NOT NULL DEFAULT 0,
    -- PnrNumber in upper case, for the pnrNumber filter.
    pnr_key        TEXT,
    -- Derived from the segments in the transaction that changes them: earliest
    -- departure/check-in, latest arrival/check-out (null without segments) and the
    -- highest risk level of attached regions and regions containing a segment position.
    start_at       BIGINT,
    end_at         BIGINT,
    overall_risk   BIGINT NOT NULL DEFAULT 0,
    doc            TEXT NOT NULL,
    etag           TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
CREATE INDEX itineraries_tenant_start ON itineraries (tenant_code, start_at, id);
CREATE INDEX itineraries_owner_start ON itineraries (owner_user_id, start_at);
CREATE INDEX itineraries_pnr ON itineraries (tenant_code, pnr_key);

CREATE TABLE itinerary_segments (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    itinerary_id BIGINT NOT NULL REFERENCES itineraries (id) ON DELETE CASCADE,
    -- flight, journey or hotel.
    kind         TEXT NOT NULL,
    start_at     BIGINT NOT NULL,
    end_at       BIGINT NOT NULL,
    -- Positions: origin and destination, or the hotel (lat1/lon1).
    lat1         DOUBLE PRECISION,
    lon1         DOUBLE PRECISION,
    lat2         DOUBLE PRECISION,
    lon2         DOUBLE PRECISION,
    doc          TEXT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX itinerary_segments_itinerary ON itinerary_segments (itinerary_id, kind, id);

CREATE TABLE itinerary_travelers (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    itinerary_id BIGINT NOT NULL REFERENCES itineraries (id) ON DELETE CASCADE,
    -- EmailAddress as a username key (trimmed, lower case): matched to users.
    email_key    TEXT NOT NULL,
    doc          TEXT NOT NULL,
    UNIQUE (itinerary_id, email_key)
);
CREATE INDEX itinerary_travelers_email ON itinerary_travelers (email_key, itinerary_id);

-- No cascade towards risk_regions: a region attached to an itinerary cannot be deleted.
-- The check is deferred to commit: deleting a tenant removes its itineraries (and so
-- their attachments) and its regions in one statement, and PostgreSQL may otherwise
-- check a region's references before the cascade through itineraries has run.
CREATE TABLE itinerary_regions (
    itinerary_id BIGINT NOT NULL REFERENCES itineraries (id) ON DELETE CASCADE,
    region_id    BIGINT NOT NULL REFERENCES risk_regions (id) DEFERRABLE INITIALLY DEFERRED,
    PRIMARY KEY (itinerary_id, region_id)
);
CREATE INDEX itinerary_regions_region ON itinerary_regions (region_id);
