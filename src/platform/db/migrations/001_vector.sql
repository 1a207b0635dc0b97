-- pgvector for every service. On a managed server where the service user may not create extensions,
-- an administrator runs this once beforehand; IF NOT EXISTS then needs no privilege.
CREATE EXTENSION IF NOT EXISTS vector;
