-- Each chunk's embedding also in the form the in-memory index holds (src/retrieval/vector-index/quantise.ts,
-- encodeRow): its unit vector rounded to int8, with the scale and the two error norms the exact bound needs. A
-- replica then loads a collection by reading these 780 bytes a row with binary COPY, instead of the float vector
-- (3 KiB, stored out of line) and quantising it. NULL for chunks stored before this migration: the index quantises
-- those as it loads. Kept in the row (MAIN): a code moved out of line would cost a load a TOAST read per chunk.
-- IF NOT EXISTS: benchmark databases kept from before this migration was renumbered (it was 004) hold the column.
ALTER TABLE retrieval_chunks ADD COLUMN IF NOT EXISTS embedding_i8 bytea;
ALTER TABLE retrieval_chunks ALTER COLUMN embedding_i8 SET STORAGE MAIN;
