-- Query 13: Bounded Side Input Join. Enrich each bid with a value looked up in a static side table.
CREATE TABLE side_input (
    key BIGINT,
    `value` VARCHAR
) WITH (
    'connector' = 'filesystem',
    'path' = 'examples/nexmark/side_input.csv',
    'format' = 'csv'
);

CREATE TABLE nexmark_q13 (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    dateTime TIMESTAMP(3),
    `value` VARCHAR
) WITH (
    'connector' = 'blackhole'
);

INSERT INTO nexmark_q13
SELECT
    B.auction,
    B.bidder,
    B.price,
    B.dateTime,
    S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON mod(B.auction, 10000) = S.key;
