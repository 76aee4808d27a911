-- With --no-bail every statement runs; each error is reported with its own
-- line, and the exit status is 1 at the end.
-- args: --no-bail
CREATE TABLE a (x INT) WITH ('connector' = 'datagen');
CREATE TABLE a (x INT) WITH ('connector' = 'datagen');
SELEC x FROM a;
SHOW TABLES;
