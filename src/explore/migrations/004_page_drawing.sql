-- A question's page is drawn after POST /query answers (docs/explore.md, "Publishing"): its row is written at once
-- with page_state 'drawing' and no page, then names its page and digest ('ready'), or keeps why it could not be
-- drawn ('failed', page_error). Every row from before holds its page already.
ALTER TABLE explore_dashboards
  ADD COLUMN page_state text NOT NULL DEFAULT 'ready' CHECK (page_state IN ('drawing', 'ready', 'failed')),
  ADD COLUMN page_error text;
