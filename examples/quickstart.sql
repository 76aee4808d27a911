-- quickstart.sql: a first look at Sluice (run: build/sluice examples/quickstart.sql)
--
-- Declares a stream of bids with an event-time column and a watermark, asks
-- how Sluice understands a windowed query over it (EXPLAIN), and runs it:
-- the number of bids and the highest price per auction in every 10-second
-- window of event time.  The datagen source makes 1000 events per second of
-- event time; 'events.num' bounds the run to one minute of it.

CREATE TABLE bids (
  auction  BIGINT,
  bidder   BIGINT,
  price    BIGINT,
  bid_time TIMESTAMP(3),
  WATERMARK FOR bid_time AS bid_time - INTERVAL '2' SECOND
) WITH (
  'connector' = 'datagen',
  'events.num' = '60000',
  'seed' = '42',
  'fields.auction.min' = '1',
  'fields.auction.max' = '3',
  'fields.price.min' = '1',
  'fields.price.max' = '1000'
);

SHOW TABLES;

DESCRIBE bids;

EXPLAIN
SELECT auction, window_start, window_end,
       COUNT(*)   AS bids,
       MAX(price) AS top_price
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bid_time), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;

SELECT auction, window_start, window_end,
       COUNT(*)   AS bids,
       MAX(price) AS top_price
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bid_time), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;
