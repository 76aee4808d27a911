-- Query 12: Processing Time Windows. How many bids does each user make in each 10 second processing-time window?
CREATE TABLE nexmark_q12 (
    bidder BIGINT,
    bid_count BIGINT,
    starttime TIMESTAMP(3),
    endtime TIMESTAMP(3)
) WITH (
    'connector' = 'blackhole'
);

INSERT INTO nexmark_q12
SELECT
    B.bidder,
    count(*) AS bid_count,
    TUMBLE_START(B.p_time, INTERVAL '10' SECOND) AS starttime,
    TUMBLE_END(B.p_time, INTERVAL '10' SECOND) AS endtime
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
GROUP BY B.bidder, TUMBLE(B.p_time, INTERVAL '10' SECOND);
