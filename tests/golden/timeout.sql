-- .timeout stops a statement that runs longer than it, as Ctrl-C would,
-- with an error that says so; a bad value is refused; off lifts the limit.
-- args: --no-bail -m csv --no-headers
CREATE TABLE endless (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'ro', 'key.range' = '1000');
.timeout 300
SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE endless, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end HAVING COUNT(*) < 0;
SELECT 1 AS still_runs;
-- An updating result stopped so prints no table: what had arrived is not
-- its result (the same for a node that fails).
SELECT COUNT(*) AS so_far FROM endless;
.timeout soon
.timeout off
SELECT 2 AS no_limit;
