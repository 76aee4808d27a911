-- A statement that spans several lines, with the error on its fourth line
-- (line 9 of the file): the line numbers are the file's.
CREATE TABLE bids (auction BIGINT, price BIGINT)
  WITH ('connector' = 'datagen');

SELECT auction,
       price
FROM bids
WHERE price > ;
