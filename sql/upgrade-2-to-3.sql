-- Upgrade a leaderrun lease table from schema 2 to schema 3: revocation by
-- `leaderrun --release` (revoked_term), `--pause` (paused_until, paused_by)
-- and `--once-per` (last_slot, slot_term). `leaderrun --init` does the same
-- in place; no row or term is lost. Run once, before any leaderrun of this
-- version contends (older ones keep working on the upgraded table, see
-- UPGRADING in leaderrun-safety(7)):
--   mysql ops < sql/upgrade-2-to-3.sql
ALTER TABLE `leaderrun_lease`
  ADD COLUMN revoked_term BIGINT UNSIGNED NOT NULL DEFAULT 0,
  ADD COLUMN paused_until DATETIME(6) NULL,
  ADD COLUMN paused_by    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  ADD COLUMN last_slot    DATETIME(6) NULL,
  ADD COLUMN slot_term    BIGINT UNSIGNED NULL;
