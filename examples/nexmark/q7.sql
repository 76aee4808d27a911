-- Query 7: Highest Bid. The bids with the highest price in each 10 second window.
CREATE TABLE nexmark_q7 (
    auction BIGINT,
    price BIGINT,
    bidder BIGINT,
    dateTime TIMESTAMP(3),
    extra VARCHAR
) WITH (
    'connector' = 'blackhole'
);

INSERT INTO nexmark_q7
SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra
FROM bid B
JOIN (
    SELECT MAX(B1.price) AS maxprice, TUMBLE_ROWTIME(B1.dateTime, INTERVAL '10' SECOND) AS dateTime
    FROM bid B1
    GROUP BY TUMBLE(B1.dateTime, INTERVAL '10' SECOND)
) B1
ON B.price = B1.maxprice
WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime;
