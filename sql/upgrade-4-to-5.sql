-- Upgrade a leaderrun database from schema 4 to schema 5: a row a slot
-- (`--slots N`). The lease table's key becomes (name, slot) and the run
-- history's (lease, slot, term); every row and term is kept, and an existing
-- lease is slot 0 of one slot. Builds of schema 3 and 4 keep contending on
-- one-slot leases side by side with schema-5 builds during a rolling
-- upgrade; `--slots` above 1 needs every contender of that lease at schema 5.
-- `leaderrun --init` does the same. Run once:
--   mysql ops < sql/upgrade-4-to-5.sql
-- For a --table other than leaderrun_lease, name both tables accordingly
-- (the history is NAME_history; a NAME ending in _lease: that suffix
-- replaced by _history).
ALTER TABLE `leaderrun_lease`
  ADD COLUMN slot  SMALLINT UNSIGNED NOT NULL DEFAULT 0 AFTER name,
  ADD COLUMN slots SMALLINT UNSIGNED NOT NULL DEFAULT 1 AFTER slot,
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (name, slot);

ALTER TABLE `leaderrun_history`
  ADD COLUMN slot SMALLINT UNSIGNED NOT NULL DEFAULT 0 AFTER lease,
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (lease, slot, term);
