-- Retrievals are now recorded in the platform's audit chain (audit_records, service 'retrieval', action 'query'),
-- which GET /audit/queries lists. The rows recorded before it stay here, unchained, under a name that says so.
ALTER TABLE retrieval_audit RENAME TO retrieval_audit_before_chain;
ALTER INDEX retrieval_audit_user RENAME TO retrieval_audit_before_chain_user;
