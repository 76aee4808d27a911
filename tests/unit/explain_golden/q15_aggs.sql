SELECT DATE_FORMAT(dateTime, 'yyyy-MM-dd') as `day`,
       count(*) AS total_bids,
       count(*) filter (where price < 10000) AS rank1_bids,
       count(distinct bidder) AS total_bidders,
       avg(price) AS avg_price
FROM bid
GROUP BY DATE_FORMAT(dateTime, 'yyyy-MM-dd')
