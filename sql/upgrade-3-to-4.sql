-- Upgrade a leaderrun database from schema 3 to schema 4: the run history
-- (`leaderrun --history`, and the last success times of `--status --format
-- prometheus`). The lease table itself is unchanged, so leaderrun builds of
-- schema 3 and 4 contend on it side by side during a rolling upgrade; a
-- schema-4 build records no history until this table exists (it warns
-- once). `leaderrun --init` does the same. Run once:
--   mysql ops < sql/upgrade-3-to-4.sql
-- For a --table other than leaderrun_lease, the history is NAME_history
-- (a NAME ending in _lease: that suffix replaced by _history).
CREATE TABLE IF NOT EXISTS `leaderrun_history` (
  lease       VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  term        BIGINT UNSIGNED NOT NULL,
  holder      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  host        VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  started_at  DATETIME(6) NOT NULL,
  ended_at    DATETIME(6) NULL,
  outcome     VARCHAR(16) NOT NULL DEFAULT '',
  exit_status INT NULL,
  exit_signal INT NULL,
  PRIMARY KEY (lease, term)
) ENGINE=InnoDB;
