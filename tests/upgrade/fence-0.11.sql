-- The fence's move and end as leaderrun 0.11.0 made them (git show
-- 8109ebe:sql/leaderrun.sql), for the tests that --init replaces them only
-- when that downgrades nothing (tests/integration/test_fence.c). Rename
-- `leaderrun_ for another --table.
DELIMITER ;;
CREATE PROCEDURE `leaderrun_fence_move`(
    IN p_lease VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN p_slot SMALLINT UNSIGNED, IN p_term BIGINT UNSIGNED, IN p_fencer VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin)
  MODIFIES SQL DATA SQL SECURITY DEFINER
  COMMENT 'leaderrun: moves the fence to TERM, which holds the lease, for the account FENCER'
BEGIN
  DECLARE held BIGINT UNSIGNED DEFAULT NULL;
  DECLARE who VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT IF(IFNULL(p_fencer, '') = '', LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1), p_fencer);
  SELECT term INTO held FROM `leaderrun_lease`
    WHERE name = p_lease AND slot = p_slot AND term = p_term AND expires_at > UTC_TIMESTAMP(6);
  IF held IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'leaderrun_fence_move: the term does not hold the lease';
  END IF;
  UPDATE `leaderrun_fence` SET term = p_term, fencer = who, fences = UNIX_TIMESTAMP() << 32
    WHERE lease = p_lease AND slot = p_slot AND term < p_term;
  IF ROW_COUNT() = 0 THEN
    INSERT IGNORE INTO `leaderrun_fence` (lease, slot, term, fencer, fences)
      VALUES (p_lease, p_slot, p_term, who, UNIX_TIMESTAMP() << 32);
    IF ROW_COUNT() = 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
        'leaderrun_fence_move: the fence holds this term or a newer one';
    END IF;
  END IF;
END;;
CREATE PROCEDURE `leaderrun_fence_end`(
    IN p_lease VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN p_slot SMALLINT UNSIGNED, IN p_term BIGINT UNSIGNED)
  MODIFIES SQL DATA SQL SECURITY DEFINER
  COMMENT 'leaderrun: ends the session of a transaction fenced with a stale term'
BEGIN
  DECLARE c, n, was, held, up BIGINT UNSIGNED DEFAULT NULL;
  DECLARE who VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL;
  DECLARE sessionless, noprocess BOOLEAN DEFAULT FALSE;
  SET @leaderrun_fence_ended = NULL, @leaderrun_fence_held_by = NULL;
  SELECT term INTO held FROM `leaderrun_lease`
    WHERE name = p_lease AND slot = p_slot AND term = p_term AND expires_at > UTC_TIMESTAMP(6);
  IF held IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'leaderrun_fence_end: the term does not hold the lease';
  END IF;
  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  SELECT fences INTO was FROM `leaderrun_fence` WHERE lease = p_lease AND slot = p_slot AND term < p_term;
  SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED;
  SELECT fenced_by, fences, fencer INTO c, n, who FROM `leaderrun_fence`
    WHERE lease = p_lease AND slot = p_slot AND term < p_term;
  IF was IS NULL OR n IS NULL OR n = was OR c = CONNECTION_ID() THEN
    SET c = NULL;
  ELSE
    BEGIN
      DECLARE CONTINUE HANDLER FOR 1227 SET noprocess = TRUE;
      SET sessionless = EXISTS (SELECT 1 FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = 0);
    END;
    IF noprocess THEN
      SET up = (SELECT VARIABLE_VALUE FROM performance_schema.global_status WHERE VARIABLE_NAME = 'Uptime');
      /*M!100300 SET up = (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
        WHERE VARIABLE_NAME = 'Uptime'); */
      IF up IS NULL OR UNIX_TIMESTAMP() - up >= was >> 32 THEN
        SET c = NULL, @leaderrun_fence_held_by = 'restart';
      ELSEIF NOT EXISTS (SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = c AND USER = who) THEN
        SET c = NULL, @leaderrun_fence_held_by = 'unseen';
      END IF;
    ELSEIF sessionless THEN
      SET c = NULL, @leaderrun_fence_held_by = 'xa';
    ELSEIF NOT EXISTS (SELECT 1 FROM information_schema.INNODB_TRX x
        JOIN information_schema.PROCESSLIST p ON p.ID = x.trx_mysql_thread_id
        WHERE x.trx_mysql_thread_id = c AND p.USER = who) THEN
      SET c = NULL;
    END IF;
  END IF;
  SET @leaderrun_fence_ended = c;
  IF c IS NOT NULL THEN
    KILL CONNECTION c;
  END IF;
END;;
DELIMITER ;
