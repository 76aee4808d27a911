-- stdin
-- SQL piped on stdin runs as a script: no file name in the error, but the
-- line numbers are those of the input.
CREATE TABLE t (a INT) WITH ('connector' = 'datagen');
SHOW TABLES;
SHOW TABLEZ;
