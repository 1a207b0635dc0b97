-- Pages live in the object store (SVC_DASHBOARDS_STORE), where the runtime reads them too: the row names the page's
-- key and its sha256, against which the runtime checks what it fetched. `file` remains only for pages written
-- before; `svc dashboards resign` moves them into the store.
ALTER TABLE explore_dashboards ADD COLUMN object_key text, ADD COLUMN digest text, ALTER COLUMN file DROP NOT NULL;
