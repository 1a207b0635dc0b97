-- A dashboard keeps the chart it was published with ({type, x, y}; null before charts were chosen), and a
-- dashboard of several cards the ids of the dashboards it was built from (null for one question's dashboard).
ALTER TABLE explore_dashboards ADD COLUMN chart jsonb, ADD COLUMN cards jsonb;
