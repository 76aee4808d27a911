CREATE TABLE clicks (
  user_name STRING,
  url STRING,
  price INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'tests/sql/data/clicks.csv',
  'format' = 'csv'
);
CREATE TABLE buys (
  user_name STRING,
  amount INT,
  ts TIMESTAMP(1),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'tests/sql/data/buys.csv',
  'format' = 'csv'
);
CREATE VIEW click_counts AS
SELECT user_name, window_start, window_end, COUNT(*) AS clicks, SUM(price) AS spent
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY user_name, window_start, window_end;
CREATE VIEW buy_sums_total AS
SELECT window_start, window_end, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE buys, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end;
CREATE VIEW buy_sums AS
SELECT user_name, window_start, window_end, SUM(amount) AS bought, COUNT(*) AS buys
FROM TABLE(TUMBLE(TABLE buys, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY user_name, window_start, window_end;
SELECT c.user_name, b.user_name, c.window_start
FROM click_counts c
JOIN buy_sums b ON c.window_start = b.window_start AND c.window_end = b.window_end
  AND c.user_name < b.user_name
WHERE b.bought >= 300;
