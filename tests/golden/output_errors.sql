-- Files that cannot be opened are errors with the line of the command;
-- results keep going to stdout.
-- args: --no-bail
.output /nonexistent-dir/out.csv
.read /nonexistent-dir/script.sql
.read
CREATE TABLE t (a INT) WITH ('connector' = 'datagen');
SHOW TABLES;
