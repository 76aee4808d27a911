CREATE TABLE bids (
  auction  BIGINT,
  price    BIGINT,
  bid_time TIMESTAMP(3),
  pt AS PROCTIME(),
  WATERMARK FOR bid_time AS bid_time - INTERVAL '2' SECOND
) WITH ('connector' = 'datagen', 'seed' = '42')
