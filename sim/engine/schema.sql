-- The booking engine's two tables. The idempotency key lives in the booking
-- row, so it commits or rolls back together with the booking and the seats.

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
    created_at      timestamptz NOT NULL,
    -- Keys are per user: two users who happen to send the same key get two
    -- bookings. Two copies of one request that race past the lookup are
    -- settled here: the second INSERT fails with a unique violation (23505).
    CONSTRAINT bookings_user_key UNIQUE (user_id, idempotency_key)
);
