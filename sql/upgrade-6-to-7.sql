-- Upgrade a leaderrun database from schema 6 to schema 7: the fence's rights
-- stay the fence's. Schema 6's procedures ran with their definer's rights
-- and trusted their arguments and the table's rows, which leaderrun's
-- account could write: that account could make leaderrun_fence_end end any
-- session, move the fence back, and a job's account could hold any lease's
-- fence. Schema 7 names on the fence the one account that may fence with
-- its term, moves it by a procedure (leaderrun_fence_move) that checks the
-- lease row, ends only a session that really holds a stale fence, and
-- leaves nothing behind when it refuses (leaderrun-safety(7), SECURITY).
--
-- Run once, as an administrator who may create routines, grant and revoke,
-- and end other accounts' sessions (CONNECTION ADMIN on MariaDB,
-- CONNECTION_ADMIN on MySQL), after every host runs a leaderrun of schema 7
-- (they move a schema-6 fence as before until this script has run):
--   mysql ops < sql/upgrade-6-to-7.sql
-- `leaderrun --init`, run as such an administrator, does the same. Both keep
-- the procedures' EXECUTE grants (dropping a procedure drops its grants: they
-- are read first and given again, EXECUTE only), give whoever may execute
-- leaderrun_fence_end EXECUTE on leaderrun_fence_move too, and take every
-- account's write grants on the fence's table away (sql/grants.sql shows
-- what remains). Until a lease's next acquisition names its fencer, its
-- fence refuses every account. For a --table other than leaderrun_lease,
-- rename the table and the procedures accordingly.

ALTER TABLE `leaderrun_fence`
  ADD COLUMN fencer    VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '';;

-- Who may execute the procedures, before they are dropped.
CREATE TEMPORARY TABLE leaderrun_upgrade_grants AS
  SELECT User, Host, Routine_name FROM mysql.procs_priv
  WHERE Db = DATABASE() AND Routine_type = 'PROCEDURE' AND FIND_IN_SET('Execute', Proc_priv)
  AND Routine_name IN ('leaderrun_fence', 'leaderrun_fence_slot', 'leaderrun_fence_end');

DROP PROCEDURE IF EXISTS `leaderrun_fence_slot`;
DROP PROCEDURE IF EXISTS `leaderrun_fence`;
DROP PROCEDURE IF EXISTS `leaderrun_fence_end`;
DROP PROCEDURE IF EXISTS `leaderrun_fence_move`;

-- The procedures of schema 7 (sql/leaderrun.sql says why each is so).
DELIMITER ;;
CREATE PROCEDURE `leaderrun_fence_slot`(
    IN p_lease VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN p_slot SMALLINT UNSIGNED, IN p_term BIGINT UNSIGNED)
  MODIFIES SQL DATA SQL SECURITY DEFINER
  COMMENT 'leaderrun: fails (45000) unless TERM holds the lease; call it inside the transaction'
BEGIN
  DECLARE me VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1);
  DECLARE who VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL;
  DECLARE cur BIGINT UNSIGNED DEFAULT NULL;
  DECLARE done, undone BOOLEAN DEFAULT FALSE;
  DECLARE msg, q VARCHAR(255) CHARACTER SET utf8mb4;
  /*M!100300 IF @@autocommit = 1 AND @@in_transaction = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'leaderrun_fence: call it inside the transaction it guards, after START TRANSACTION';
  END IF; */
  SELECT fencer, term INTO who, cur FROM `leaderrun_fence` WHERE lease = p_lease AND slot = p_slot;
  IF who = me AND cur = p_term THEN
    UPDATE `leaderrun_fence` SET fences = fences + 1, fenced_by = CONNECTION_ID()
      WHERE lease = p_lease AND slot = p_slot AND term = p_term AND fencer = me;
    SET done = ROW_COUNT() = 1;
  END IF;
  IF NOT done THEN
    BEGIN
      DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET undone = TRUE;
      ROLLBACK;
    END;
    IF undone THEN
      KILL CONNECTION CONNECTION_ID();
    END IF;
    SET msg = IF(who <> me, CONCAT(' may not be fenced by account ', QUOTE(LEFT(me, 32))),
      CONCAT(IF(p_slot > 0, CONCAT(' slot ', p_slot), ''), ' term ', IFNULL(p_term, 'NULL'), ' is stale'));
    SET q = QUOTE(LEFT(p_lease, 103 - CHAR_LENGTH(msg)));
    IF CHAR_LENGTH(q) > 105 - CHAR_LENGTH(msg) THEN
      SET q = QUOTE(LEFT(p_lease, (103 - CHAR_LENGTH(msg)) DIV 2));
    END IF;
    SET msg = CONCAT('leaderrun_fence: lease ', q, msg);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
END;;
CREATE PROCEDURE `leaderrun_fence`(
    IN p_lease VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, IN p_term BIGINT UNSIGNED)
  MODIFIES SQL DATA SQL SECURITY DEFINER
  COMMENT 'leaderrun: fails (45000) unless TERM holds the lease; call it inside the transaction'
BEGIN
  DECLARE p_slot SMALLINT UNSIGNED DEFAULT 0;
  DECLARE me VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1);
  DECLARE who VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL;
  DECLARE cur BIGINT UNSIGNED DEFAULT NULL;
  DECLARE done, undone BOOLEAN DEFAULT FALSE;
  DECLARE msg, q VARCHAR(255) CHARACTER SET utf8mb4;
  /*M!100300 IF @@autocommit = 1 AND @@in_transaction = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'leaderrun_fence: call it inside the transaction it guards, after START TRANSACTION';
  END IF; */
  SELECT fencer, term INTO who, cur FROM `leaderrun_fence` WHERE lease = p_lease AND slot = p_slot;
  IF who = me AND cur = p_term THEN
    UPDATE `leaderrun_fence` SET fences = fences + 1, fenced_by = CONNECTION_ID()
      WHERE lease = p_lease AND slot = p_slot AND term = p_term AND fencer = me;
    SET done = ROW_COUNT() = 1;
  END IF;
  IF NOT done THEN
    BEGIN
      DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET undone = TRUE;
      ROLLBACK;
    END;
    IF undone THEN
      KILL CONNECTION CONNECTION_ID();
    END IF;
    SET msg = IF(who <> me, CONCAT(' may not be fenced by account ', QUOTE(LEFT(me, 32))),
      CONCAT(IF(p_slot > 0, CONCAT(' slot ', p_slot), ''), ' term ', IFNULL(p_term, 'NULL'), ' is stale'));
    SET q = QUOTE(LEFT(p_lease, 103 - CHAR_LENGTH(msg)));
    IF CHAR_LENGTH(q) > 105 - CHAR_LENGTH(msg) THEN
      SET q = QUOTE(LEFT(p_lease, (103 - CHAR_LENGTH(msg)) DIV 2));
    END IF;
    SET msg = CONCAT('leaderrun_fence: lease ', q, msg);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
END;;
CREATE PROCEDURE `leaderrun_fence_move`(
    IN p_lease VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN p_slot SMALLINT UNSIGNED, IN p_term BIGINT UNSIGNED, IN p_fencer VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin)
  MODIFIES SQL DATA SQL SECURITY DEFINER
  COMMENT 'leaderrun: moves the fence to TERM, which holds the lease, for the account FENCER'
BEGIN
  DECLARE held, up, began BIGINT UNSIGNED DEFAULT NULL;
  DECLARE who VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT IF(IFNULL(p_fencer, '') = '', LEFT(USER(), CHAR_LENGTH(USER()) - CHAR_LENGTH(SUBSTRING_INDEX(USER(), '@', -1)) - 1), p_fencer);
  SELECT term INTO held FROM `leaderrun_lease`
    WHERE name = p_lease AND slot = p_slot AND term = p_term AND expires_at > UTC_TIMESTAMP(6);
  IF held IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'leaderrun_fence_move: the term does not hold the lease';
  END IF;
  SET up = (SELECT VARIABLE_VALUE FROM performance_schema.global_status WHERE VARIABLE_NAME = 'Uptime');
  /*M!100300 SET up = (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
    WHERE VARIABLE_NAME = 'Uptime'); */
  SET began = UNIX_TIMESTAMP() - up;
  UPDATE `leaderrun_fence` SET term = p_term, fencer = who, fences = IFNULL(began, 0) << 32
    WHERE lease = p_lease AND slot = p_slot AND term < p_term;
  IF ROW_COUNT() = 0 THEN
    INSERT IGNORE INTO `leaderrun_fence` (lease, slot, term, fencer, fences)
      VALUES (p_lease, p_slot, p_term, who, IFNULL(began, 0) << 32);
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
  DECLARE c, n, was, held, up, began BIGINT UNSIGNED DEFAULT NULL;
  DECLARE who VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL;
  DECLARE xa VARCHAR(8) DEFAULT NULL;
  DECLARE sessionless, noprocess, cluster BOOLEAN DEFAULT FALSE;
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
      SET began = UNIX_TIMESTAMP() - up;
      BEGIN
        DECLARE CONTINUE HANDLER FOR 1142, 1146 SET xa = NULL;
        SET cluster = EXISTS (SELECT 1 FROM performance_schema.global_variables
          WHERE VARIABLE_NAME = 'group_replication_group_name' AND VARIABLE_VALUE <> '');
        SET xa = (SELECT VARIABLE_VALUE FROM performance_schema.global_variables
          WHERE VARIABLE_NAME = 'xa_detach_on_prepare');
      END;
      /*M!100300 SET xa = 'OFF', cluster = EXISTS (SELECT 1 FROM information_schema.GLOBAL_VARIABLES
        WHERE VARIABLE_NAME = 'WSREP_ON' AND VARIABLE_VALUE = 'ON'); */
      IF IFNULL(xa, '') <> 'OFF' THEN
        SET c = NULL, @leaderrun_fence_held_by = 'xa';
      ELSEIF cluster THEN
        SET c = NULL, @leaderrun_fence_held_by = 'cluster';
      ELSEIF began IS NULL THEN
        SET c = NULL, @leaderrun_fence_held_by = 'uptime';
      ELSEIF (was >> 32) = 0 THEN
        SET c = NULL, @leaderrun_fence_held_by = 'unmarked';
      ELSEIF began + 1 < (was >> 32) OR (was >> 32) + 1 < began THEN
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

-- The grants: EXECUTE again for whoever had it (and on the move for
-- leaderrun's account, which had it on leaderrun_fence_end); no write
-- grant on the table for anyone.
DELIMITER ;;
CREATE PROCEDURE leaderrun_upgrade_6_to_7()
BEGIN
  DECLARE done BOOLEAN DEFAULT FALSE;
  DECLARE u, h, r, p VARCHAR(255) CHARACTER SET utf8mb4;
  DECLARE grants CURSOR FOR SELECT User, Host, Routine_name FROM leaderrun_upgrade_grants;
  DECLARE writes CURSOR FOR SELECT User, Host, Table_priv FROM mysql.tables_priv
    WHERE Db = DATABASE() AND Table_name = 'leaderrun_fence';
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = TRUE;
  OPEN grants;
  each_grant: LOOP
    FETCH grants INTO u, h, r;
    IF done THEN LEAVE each_grant; END IF;
    SET @leaderrun_upgrade = CONCAT('GRANT EXECUTE ON PROCEDURE `', r, '` TO ', QUOTE(u), '@', QUOTE(h));
    PREPARE g FROM @leaderrun_upgrade; EXECUTE g; DEALLOCATE PREPARE g;
    IF r = 'leaderrun_fence_end' THEN
      SET @leaderrun_upgrade = CONCAT('GRANT EXECUTE ON PROCEDURE `leaderrun_fence_move` TO ', QUOTE(u), '@', QUOTE(h));
      PREPARE g FROM @leaderrun_upgrade; EXECUTE g; DEALLOCATE PREPARE g;
    END IF;
  END LOOP;
  CLOSE grants;
  SET done = FALSE;
  OPEN writes;
  each_write: LOOP
    FETCH writes INTO u, h, p;
    IF done THEN LEAVE each_write; END IF;
    SET p = CONCAT_WS(', ', IF(FIND_IN_SET('Insert', p), 'INSERT', NULL), IF(FIND_IN_SET('Update', p), 'UPDATE', NULL),
      IF(FIND_IN_SET('Delete', p), 'DELETE', NULL), IF(FIND_IN_SET('Alter', p), 'ALTER', NULL),
      IF(FIND_IN_SET('Drop', p), 'DROP', NULL), IF(FIND_IN_SET('Trigger', p), 'TRIGGER', NULL));
    IF p <> '' THEN
      SET @leaderrun_upgrade = CONCAT('REVOKE ', p, ' ON `leaderrun_fence` FROM ', QUOTE(u), '@', QUOTE(h));
      PREPARE g FROM @leaderrun_upgrade; EXECUTE g; DEALLOCATE PREPARE g;
    END IF;
  END LOOP;
  CLOSE writes;
END;;
DELIMITER ;
CALL leaderrun_upgrade_6_to_7();
DROP PROCEDURE leaderrun_upgrade_6_to_7;
DROP TEMPORARY TABLE leaderrun_upgrade_grants;
