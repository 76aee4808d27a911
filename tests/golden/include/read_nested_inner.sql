-- Read by read_nested.sql (not a case of its own: it is in a subdirectory).
CREATE TABLE inner_t (b INT) WITH ('connector' = 'datagen');
SHOW TABLES;

SELECT b FROM inner_t WHERE;
