-- A FlowFile's queue row is written twice at each task it passes (taken, then moved on)
-- without changing any indexed column. With room left on its page, PostgreSQL writes each
-- new version beside the old one and touches no index (a heap-only update); a full page
-- sends it elsewhere, with a new entry in every index. Pages filled at most half leave
-- that room; pages made before this keep theirs until they are rewritten.
ALTER TABLE flow_queue SET (fillfactor = 50);
