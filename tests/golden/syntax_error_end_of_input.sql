-- The file ends in the middle of a statement (no ';'): the error points
-- just past the last word.
SELECT url FROM
