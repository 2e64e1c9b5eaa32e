-- bench/acme_data.sql — the Acme Shop sample: order_events, 1,500,000 rows.
--
--   psql -v ON_ERROR_STOP=1 -f bench/acme_data.sql
--
-- 500,000 orders placed evenly over one year (one every 63.072 s from
-- 2025-10-01 00:00 UTC); each order has three events:
--   placed   at the order's time,
--   paid     1 minute to 2 hours later (uniform),
--   shipped  3 to 24 hours later (uniform).
-- ids are assigned in happened_at order (ties broken by order_id, then step),
-- so "the first 1,450,000 events" are the first 1,450,000 in time.
-- Deterministic: setseed() plus a single-process plan, so every run produces
-- the same rows (the fingerprint at the end shows it).  Takes ~10 s.
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET TimeZone = 'UTC';
SELECT setseed(0.2025) AS seeded \gset

DROP TABLE IF EXISTS order_events;
CREATE TABLE order_events (
    id          bigint PRIMARY KEY,
    order_id    bigint,
    kind        text,
    happened_at timestamptz
);

-- MATERIALIZED: random() is evaluated exactly once per order, in order.
WITH orders AS MATERIALIZED (
    SELECT g AS order_id,
           timestamptz '2025-10-01 00:00:00+00' + (g - 1) * (interval '365 days' / 500000) AS placed_at,
           interval '1 minute' + random() * interval '119 minutes' AS pay_delay,
           interval '3 hours' + random() * interval '21 hours' AS ship_delay
      FROM generate_series(1, 500000) AS g
), events AS (
    SELECT order_id, 1 AS step, 'placed'::text AS kind, placed_at AS happened_at FROM orders
    UNION ALL
    SELECT order_id, 2, 'paid', placed_at + pay_delay FROM orders
    UNION ALL
    SELECT order_id, 3, 'shipped', placed_at + ship_delay FROM orders
)
INSERT INTO order_events (id, order_id, kind, happened_at)
SELECT row_number() OVER (ORDER BY happened_at, order_id, step), order_id, kind, happened_at
  FROM events
 ORDER BY 1;

VACUUM (FREEZE, ANALYZE) order_events;
