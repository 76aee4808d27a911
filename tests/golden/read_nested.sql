-- .read runs another file: an error in it names that file and its own
-- line, and (bail on) stops the outer script too.
CREATE TABLE base (a INT) WITH ('connector' = 'datagen');
.read include/read_nested_inner.sql
SHOW TABLES;
