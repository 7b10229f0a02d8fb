-- Schema 4 as leaderrun's sql/leaderrun.sql had it (git show 3c71e3f:sql/leaderrun.sql),
-- comments left out: a table that a fleet has not upgraded yet, for the
-- integration suite old_schema (test_old_schema.c renames the tables).
CREATE TABLE IF NOT EXISTS `leaderrun_lease` (
  name         VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
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
  PRIMARY KEY (name)
) ENGINE=InnoDB;

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
