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
-- sql/upgrade-4-to-5.sql (schema 5: slots), then sql/upgrade-5-to-6.sql
-- (schema 6: the fence, at the end of this file).
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

-- Schema 6: the fence. A job's own transaction proves that its term still
-- holds the lease with CALL leaderrun_fence(lease, term) (or
-- leaderrun_fence_slot(lease, slot, term) under --slots), and fails with
-- SQLSTATE 45000 once a newer term took it over. leaderrun moves the fence
-- row to each new term before it starts the command; the move waits for the
-- transactions that fenced with the older term to end (they hold the row),
-- and leaderrun_fence_end ends the session of one that does not (see
-- leaderrun-safety(7), FENCED WRITES). The fence is a table of its own, so
-- that renewals of the lease row never wait behind a job's transaction.
-- For a --table other than leaderrun_lease, the fence is NAME_fence (a NAME
-- ending in _lease: that suffix replaced by _fence), and so are the
-- procedures' names: NAME_fence, NAME_fence_slot, NAME_fence_end.
CREATE TABLE IF NOT EXISTS `leaderrun_fence` (
  lease     VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  slot      SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  term      BIGINT UNSIGNED NOT NULL DEFAULT 0,
  fences    BIGINT UNSIGNED NOT NULL DEFAULT 0,
  fenced_by BIGINT UNSIGNED NULL,
  PRIMARY KEY (lease, slot)
) ENGINE=InnoDB;

DELIMITER ;;
-- The fence itself. It writes the row (a count and the session's id), so
-- that the transaction holds the row until it ends: a takeover's move waits
-- for it on one server, and Galera's and Group Replication's certification
-- sees the conflict across members, which a read lock would not give.
CREATE PROCEDURE IF NOT EXISTS `leaderrun_fence_slot`(
    IN p_lease VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN p_slot SMALLINT UNSIGNED, IN p_term BIGINT UNSIGNED)
  MODIFIES SQL DATA SQL SECURITY DEFINER
  COMMENT 'leaderrun: fails (45000) unless TERM holds the lease; call it inside the transaction'
BEGIN
  DECLARE cur BIGINT UNSIGNED DEFAULT NULL;
  DECLARE msg, q VARCHAR(255) CHARACTER SET utf8mb4;
  -- Outside a transaction the proof would end with the CALL. (MariaDB
  -- only: MySQL has no @@in_transaction.)
  /*M!100300 IF @@autocommit = 1 AND @@in_transaction = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'leaderrun_fence: call it inside the transaction it guards, after START TRANSACTION';
  END IF; */
  UPDATE `leaderrun_fence` SET fences = fences + 1, fenced_by = CONNECTION_ID()
    WHERE lease = p_lease AND slot = p_slot AND term = p_term;
  IF ROW_COUNT() <> 1 THEN
    SELECT term INTO cur FROM `leaderrun_fence` WHERE lease = p_lease AND slot = p_slot FOR UPDATE;
    -- The refused transaction ends here: its locks (this read's, and the
    -- UPDATE's, on the row or on its place) would otherwise stay with a
    -- session left open (a host cut off), holding up the current term's
    -- fences and the next move. An XA transaction cannot end here: the row
    -- names its session, for leaderrun_fence_end.
    UPDATE `leaderrun_fence` SET fences = fences + 1, fenced_by = CONNECTION_ID() WHERE lease = p_lease AND slot = p_slot;
    BEGIN
      DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END; -- XA: its own rollback
      ROLLBACK;
    END;
    -- MESSAGE_TEXT holds 128 characters: the terms in full, the name cut.
    SET msg = CONCAT(IF(p_slot > 0, CONCAT(' slot ', p_slot), ''), ' term ', IFNULL(p_term, 'NULL'),
      ' is stale; the current term is ', IFNULL(cur, 'none'));
    SET q = QUOTE(LEFT(p_lease, 103 - CHAR_LENGTH(msg)));
    IF CHAR_LENGTH(q) > 105 - CHAR_LENGTH(msg) THEN
      SET q = QUOTE(LEFT(p_lease, (103 - CHAR_LENGTH(msg)) DIV 2));
    END IF;
    SET msg = CONCAT('leaderrun_fence: lease ', q, msg);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
END;;
CREATE PROCEDURE IF NOT EXISTS `leaderrun_fence`(
    IN p_lease VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, IN p_term BIGINT UNSIGNED)
  MODIFIES SQL DATA SQL SECURITY DEFINER
  COMMENT 'leaderrun: fails (45000) unless TERM holds the lease; call it inside the transaction'
BEGIN
  CALL `leaderrun_fence_slot`(p_lease, 0, p_term);
END;;
-- leaderrun's, after its move waited a lock wait out: ends the session
-- whose open transaction fenced with a term older than P_TERM (the row's
-- uncommitted version names it). Ending another account's session takes
-- CONNECTION ADMIN (MariaDB) or CONNECTION_ADMIN (MySQL) of the definer.
CREATE PROCEDURE IF NOT EXISTS `leaderrun_fence_end`(
    IN p_lease VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN p_slot SMALLINT UNSIGNED, IN p_term BIGINT UNSIGNED)
  MODIFIES SQL DATA SQL SECURITY DEFINER
  COMMENT 'leaderrun: ends the session of a transaction fenced with a stale term'
BEGIN
  DECLARE c, n, was BIGINT UNSIGNED DEFAULT NULL;
  -- The row as committed, then as an open transaction left it: only a
  -- fence still open has counted one more. Any other lock on the row
  -- names nobody (its last fencer's id may be anyone's by now).
  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  SELECT fences INTO was FROM `leaderrun_fence` WHERE lease = p_lease AND slot = p_slot;
  SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED;
  SELECT fenced_by, fences INTO c, n FROM `leaderrun_fence` WHERE lease = p_lease AND slot = p_slot AND term < p_term;
  IF n IS NULL OR n = was THEN
    SET c = NULL;
  END IF;
  SET @leaderrun_fence_ended = c;
  IF c IS NOT NULL AND c <> CONNECTION_ID() THEN
    KILL CONNECTION c;
  END IF;
END;;
DELIMITER ;
