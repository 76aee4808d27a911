-- Query 2: Selection. Find the bids on a set of specific auctions (every 123rd auction).
CREATE TABLE nexmark_q2 (
    auction BIGINT,
    price BIGINT
) WITH (
    'connector' = 'blackhole'
);

INSERT INTO nexmark_q2
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
