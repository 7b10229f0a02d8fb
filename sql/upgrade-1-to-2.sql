-- Upgrade a leaderrun lease table from schema 1 (leaderrun 0.1) to schema 2:
-- the last command's exit status and finish time, for --status and
-- --min-hold. `leaderrun --init` does the same in place. Run once:
--   mysql ops < sql/upgrade-1-to-2.sql
ALTER TABLE `leaderrun_lease`
  ADD COLUMN last_exit   INT NULL,
  ADD COLUMN finished_at DATETIME(6) NULL;
