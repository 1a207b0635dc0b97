-- Collection versions come from one sequence, so a collection deleted and created again under the same slug never
-- repeats a version that another replica's in-memory copy still holds.
CREATE SEQUENCE retrieval_collection_versions;
UPDATE retrieval_collections SET version = nextval('retrieval_collection_versions');
ALTER TABLE retrieval_collections ALTER COLUMN version SET DEFAULT nextval('retrieval_collection_versions');
