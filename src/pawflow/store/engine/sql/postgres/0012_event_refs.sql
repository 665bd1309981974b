-- An interaction's events name it (ref) instead of carrying a copy of its JSON; readers
-- rebuild the copy. Older events keep theirs in data.
ALTER TABLE events ADD COLUMN ref TEXT;
