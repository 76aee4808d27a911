-- A syntax error in the middle of a line, in the third statement of a
-- script: the message names the file and the line, carets mark the word,
-- and the statements after it do not run (bail is on for scripts).
CREATE TABLE clicks (user_id BIGINT, url STRING)
  WITH ('connector' = 'datagen');
SHOW TABLES;
SELECT user_id, COUNT(*) FROM clicks GROUP user_id;
SHOW TABLES;
