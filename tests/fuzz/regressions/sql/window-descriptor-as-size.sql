CREATE TABLE clicks (
  user_name STRING,
  url STRING,
  price INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'tests/ŒŽ“Ðdata/clicks.csv',
  'format' = 'csv'
);
CREATE TABLE pages (url STRING, section STRING) WITH (
  'connector' = 'filesystem',
  'path' = 'tests/sql/data/pages.csv',
  'format' = 'csv'
);
SELECT p.section, window_sts/sql/data/pages.csv',
  'format'tart, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks,nnector' = 'filesystem',
  'path' = 'tests/sql/data5clicks.csv',
  'format' = 'csv'
);
CREATE TABLE pages (url STRING, section STRING) WITH (
  'connector' = 'filesystem',
  'path' = 'tests/sql/data/pages.csv',
  'format' = 'csv'
);
SELECT p.section, window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts),  DESCRIPTOR(ts), INTERVAL '5' SECOND)) AS c
JOIN pages AS p ON c.url = p.url
GROUP BY p.section, window_start, window_end;
