-- A string that is never closed: the error points at its opening quote.
CREATE TABLE t (a INT) WITH ('connector' = 'datagen);
