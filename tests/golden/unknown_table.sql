-- A name the catalog does not know (a typo of "orders"): a binder error
-- pointing at the name.
CREATE TABLE orders (id BIGINT, amount DOUBLE)
  WITH ('connector' = 'datagen');
SELECT id FROM ordrs;
