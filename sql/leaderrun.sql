-- leaderrun lease table. Apply once per database (or run `leaderrun --init`,
-- which executes this same statement):
--   mysql ops < sql/leaderrun.sql
-- One row per lease name and slot (schema 5: `--slots N` runs up to N
-- holders, a slot each; slot 0 is the row of a one-slot lease, and `slots`
-- is the count in force). Rows are never deleted: `term` only grows, per
-- slot, and it is the fencing token handed to the command as LEADERRUN_TERM. last_exit
-- and finished_at record how the last holder's command ended (schema 2).
-- Schema 3: revoked_term is the term that `leaderrun --release` revoked (its
-- holder stops, then lets go), paused_until/paused_by a `--pause`, and
-- last_slot/slot_term the last `--once-per` slot a run took and its term.
-- Older tables are upgraded in place, every row and term kept, by
-- `leaderrun --init` or sql/upgrade-1-to-2.sql, sql/upgrade-2-to-3.sql, then
-- sql/upgrade-3-to-4.sql (schema 4: the run history, below), then
-- sql/upgrade-4-to-5.sql (schema 5: slots).
CREATE TABLE IF NOT EXISTS `leaderrun_lease` (
  name         VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  slot         SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  slots        SMALLINT UNSIGNED NOT NULL DEFAULT 1,
  holder       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  term         BIGINT UNSIGNED NOT NULL DEFAULT 0,
  acquired_at  DATETIME(6) NULL,
  renewed_at   DATETIME(6) NULL,
  expires_at   DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00',
  last_exit    INT NULL,
  finished_at  DATETIME(6) NULL,
  revoked_term BIGINT UNSIGNED NOT NULL DEFAULT 0,
  paused_until DATETIME(6) NULL,
  paused_by    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  last_slot    DATETIME(6) NULL,
  slot_term    BIGINT UNSIGNED NULL,
  PRIMARY KEY (name, slot)
) ENGINE=InnoDB;

-- Schema 4: one row per run (acquisition to release, loss or crash), kept
-- for the last --history-keep terms of each lease (default 100). Pruned by
-- DELETE on this table only.
CREATE TABLE IF NOT EXISTS `leaderrun_history` (
  lease       VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  slot        SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  term        BIGINT UNSIGNED NOT NULL,
  holder      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  host        VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  started_at  DATETIME(6) NOT NULL,
  ended_at    DATETIME(6) NULL,
  outcome     VARCHAR(16) NOT NULL DEFAULT '',
  exit_status INT NULL,
  exit_signal INT NULL,
  PRIMARY KEY (lease, slot, term)
) ENGINE=InnoDB;
