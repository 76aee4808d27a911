-- ysb.sql: the Yahoo Streaming Benchmark query.
--
-- Ad events are filtered to views, joined with the ad -> campaign table
-- (a bounded table, built into a hash table once before the stream starts),
-- and counted per campaign in 10-second tumbling windows of event time.
-- 3 million events at 100,000 events per second of event time: three
-- windows of a million events, 100 campaign rows each.

CREATE TABLE ysb_events (
  user_id    STRING,
  page_id    STRING,
  ad_id      STRING,
  ad_type    STRING,
  event_type STRING,
  event_time TIMESTAMP(3),
  ip_address STRING,
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND
) WITH (
  'connector' = 'ysb',
  'events.num' = '3000000',
  'events.per-second' = '100000',
  'seed' = '1'
);

CREATE TABLE campaigns (
  ad_id       STRING,
  campaign_id STRING
) WITH (
  'connector' = 'ysb',
  'ysb.table' = 'campaigns'
);

SELECT c.campaign_id, window_start, window_end, COUNT(*) AS views
FROM TABLE(TUMBLE(TABLE ysb_events, DESCRIPTOR(event_time), INTERVAL '10' SECOND)) AS e
JOIN campaigns AS c ON e.ad_id = c.ad_id
WHERE e.event_type = 'view'
GROUP BY c.campaign_id, window_start, window_end;
