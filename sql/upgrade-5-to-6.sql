-- Upgrade a leaderrun database from schema 5 to schema 6: the fence, a
-- table and three procedures next to the lease table (the lease table and
-- the run history stay as they are). Builds of schema 5 keep running beside
-- schema-6 builds; the fence holds once every contender of a lease is of
-- schema 6, since only they move it. `leaderrun --init` does the same. Run
-- once, as an account that may create routines (and, for
-- leaderrun_fence_end to end stale sessions, holds CONNECTION ADMIN on
-- MariaDB or CONNECTION_ADMIN on MySQL):
--   mysql ops < sql/upgrade-5-to-6.sql
-- For a --table other than leaderrun_lease, rename the table and the
-- procedures accordingly (NAME_fence, NAME_fence_slot, NAME_fence_end; a
-- NAME ending in _lease: that suffix replaced by _fence).

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
