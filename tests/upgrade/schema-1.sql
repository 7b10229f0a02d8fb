-- Schema 1 as leaderrun's sql/leaderrun.sql had it (git show 25db3bc:sql/leaderrun.sql),
-- comments left out: a table that a fleet has not upgraded yet, for the
-- integration suite old_schema (test_old_schema.c renames the tables).
CREATE TABLE IF NOT EXISTS `leaderrun_lease` (
  name        VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  holder      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  term        BIGINT UNSIGNED NOT NULL DEFAULT 0,
  acquired_at DATETIME(6) NULL,
  renewed_at  DATETIME(6) NULL,
  expires_at  DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00',
  PRIMARY KEY (name)
) ENGINE=InnoDB;
