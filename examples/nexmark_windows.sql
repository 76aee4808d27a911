-- nexmark_windows.sql: the windowed NEXMark aggregations, single stage.
--
-- Run after the NEXMark DDL (10,000 events per second of event time,
-- 100,000 events: 10 s of event time):
--
--   build/sluice examples/nexmark/ddl.sql examples/nexmark_windows.sql
--
-- The first stage of the windowed queries: q5's bids per auction in
-- hopping windows, q7's highest price per tumbling window, and q11's bids
-- per bidder session.  (The full q5 and q7 join these results back:
-- multi-stage queries come with the joins milestone.)

-- q5, first stage: bids per auction in 10 s windows every 2 s (only the hot
-- auctions' windows, with 800 bids or more, are shown).
SELECT auction, window_start, window_end, COUNT(*) AS num
FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end
HAVING COUNT(*) >= 800;

-- q7, first stage: the highest bid price per window (q7 uses 10 s; 2 s
-- here, so that this 10 s run has several windows).
SELECT window_start, window_end, MAX(price) AS maxprice, COUNT(*) AS bids
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND))
GROUP BY window_start, window_end;

-- q11: bids per bidder session (10 s gap), for bidders with long sessions.
SELECT B.bidder, COUNT(*) AS bid_count,
       SESSION_START(B.dateTime, INTERVAL '10' SECOND) AS starttime,
       SESSION_END(B.dateTime, INTERVAL '10' SECOND) AS endtime
FROM bid B
GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND)
HAVING COUNT(*) > 3490;
