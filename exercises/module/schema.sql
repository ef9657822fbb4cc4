-- The tables of the exercises' booking API. learn creates them in a
-- schema of its own for each run.

CREATE TABLE events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text        NOT NULL,
    seats_left integer     NOT NULL CHECK (seats_left >= 0),
    starts_at  timestamptz NOT NULL
);

CREATE TABLE bookings (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id         text        NOT NULL,
    event_id        bigint      NOT NULL REFERENCES events (id),
    quantity        integer     NOT NULL CHECK (quantity > 0),
    idempotency_key uuid        NOT NULL,
    created_at      timestamptz NOT NULL
    -- TODO(constraint): what lets one insert through when two requests
    -- with one key race past the lookup? (the lesson, How it works, step 4)
    -- TODO(per-user): and when two users send the same key?
);
