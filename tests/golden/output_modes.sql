-- The same result in every output mode (and with headers off).
CREATE TABLE `events` (id BIGINT) WITH ('connector' = 'datagen');
CREATE TABLE `日本語` (id BIGINT) WITH ('connector' = 'datagen');
.mode table
SHOW TABLES;
.mode box
SHOW TABLES;
.mode markdown
SHOW TABLES;
.mode csv
SHOW TABLES;
.mode json
SHOW TABLES;
.mode line
SHOW TABLES;
.headers off
.mode table
SHOW TABLES;
