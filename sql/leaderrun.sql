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
-- (schema 6: the fence) and sql/upgrade-6-to-7.sql (schema 7: the fence's
-- rights kept to the fence; at the end of this file). Apply this file once:
-- its procedures are created as such, and a second run stops at them
-- (`leaderrun --init` checks what stands and makes what is missing).
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

-- The standbys: each waiting contender's row (who, on which host, waiting
-- since when, healthy or not), for --status. Optional: without it a waiter
-- keeps no row. A row is alive while the named lock in lock_name is held:
-- by the waiter's own session, so a crashed waiter's row is dead at once,
-- with no heartbeat; the living prune the dead (hence DELETE).
CREATE TABLE IF NOT EXISTS `leaderrun_standby` (
  lease       VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  holder      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  host        VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  since       DATETIME(6) NOT NULL,
  healthy     BOOLEAN NOT NULL DEFAULT TRUE,
  lock_name   VARCHAR(64) CHARACTER SET ascii NOT NULL,
  -- Choosing the leader (leaderrun(1), CHOOSING THE LEADER): the waiter's
  -- --priority, a switch-over's choice of it (--release --to) until
  -- chosen_until or the term after chosen_term, the term it preempted
  -- (--preempt), and --spread. A table made by 0.9 gains them with
  -- `leaderrun --init`, or:
  --   ALTER TABLE leaderrun_standby ADD COLUMN priority INT NOT NULL DEFAULT 0,
  --     ADD COLUMN chosen_until DATETIME(6) NULL,
  --     ADD COLUMN chosen_term BIGINT UNSIGNED NOT NULL DEFAULT 0,
  --     ADD COLUMN preempt_term BIGINT UNSIGNED NOT NULL DEFAULT 0,
  --     ADD COLUMN spread BOOLEAN NOT NULL DEFAULT FALSE;
  priority     INT NOT NULL DEFAULT 0,
  chosen_until DATETIME(6) NULL,
  chosen_term  BIGINT UNSIGNED NOT NULL DEFAULT 0,
  preempt_term BIGINT UNSIGNED NOT NULL DEFAULT 0,
  spread       BOOLEAN NOT NULL DEFAULT FALSE,
  PRIMARY KEY (lease, holder(191))
) ENGINE=InnoDB;

-- Schema 7: the fence. A job's own transaction proves that its term still
-- holds the lease with CALL leaderrun_fence(lease, term) (or
-- leaderrun_fence_slot(lease, slot, term) under --slots), and fails with
-- SQLSTATE 45000 once a newer term took it over. leaderrun moves the fence
-- row to each new term before it starts the command
-- (leaderrun_fence_move); the move waits for the transactions that fenced
-- with the older term to end (they hold the row), and leaderrun_fence_end
-- ends the session of one that does not (see leaderrun-safety(7), FENCED
-- WRITES). The fence is a table of its own, so that renewals of the lease
-- row never wait behind a job's transaction.
--
-- No account but the procedures' definer writes this table: the
-- procedures run with their definer's rights (an administrator's, who may
-- end other accounts' sessions: PROCESS, and CONNECTION ADMIN on MariaDB,
-- CONNECTION_ADMIN on MySQL; or the application's own account's, who may
-- end its own), and each checks what its caller may do.
-- SECURITY in leaderrun-safety(7) lists what a caller controls and why none
-- of it turns the definer's rights to another use. The procedures are
-- created as such (not IF NOT EXISTS: whatever already stands under these
-- names is not to be trusted; `leaderrun --init` checks it and says what to
-- drop). Their bodies carry no comments, since the server keeps none and
-- --init compares them with its own; their why is here.
--
-- For a --table other than leaderrun_lease, the fence is NAME_fence (a NAME
-- ending in _lease: that suffix replaced by _fence), and so are the
-- procedures' names: NAME_fence, NAME_fence_slot, NAME_fence_end,
-- NAME_fence_move.
--
-- fencer: the one account (its user name, as USER() gives it) whose
-- transactions may fence with the row's term; each move names it
-- (leaderrun --fence-user, by default leaderrun's own account).
CREATE TABLE IF NOT EXISTS `leaderrun_fence` (
  lease     VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  slot      SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  term      BIGINT UNSIGNED NOT NULL DEFAULT 0,
  fences    BIGINT UNSIGNED NOT NULL DEFAULT 0,
  fenced_by BIGINT UNSIGNED NULL,
  fencer    VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  PRIMARY KEY (lease, slot)
) ENGINE=InnoDB;

DELIMITER ;;
-- The fence itself. It writes the row (a count and the session's id), so
-- that the transaction holds the row until it ends: a takeover's move waits
-- for it on one server, and Galera's and Group Replication's certification
-- sees the conflict across members, which a read lock would not give. Only
-- the row's fencer may fence, and only with the row's term. A refused
-- fence ends its transaction, so that nothing it locked (the row, its
-- place, a SERIALIZABLE read) stays with a session left open; a
-- transaction that cannot be rolled back here (an XA branch, a stored
-- function's) has its session ended instead, which rolls it back. The
-- refusal names the caller's own term only. Outside a transaction the
-- proof would end with the CALL: refused (MariaDB only: MySQL has no
-- @@in_transaction).
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
-- The same, for a lease without slots: the same body with its slot 0, not
-- a CALL of leaderrun_fence_slot (it calls no routine by name).
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
-- leaderrun's, at each acquisition: moves the fence to TERM, only if TERM
-- holds the lease (by the lease row) and only forward, the row made on
-- first use, naming FENCER (by default the caller's account). It writes
-- the second it moved (UNIX time) into the high 32 bits of fences, which
-- each fence counts up from: leaderrun_fence_end reads it.
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
-- leaderrun's, after its move waited a lock wait out, with a TERM that
-- holds the lease: ends the session whose open transaction fenced with an
-- older term. The row as committed, then as an open transaction left it:
-- only a fence still open has counted one more, and only the fence writes
-- the count, with its own session's id. That session must still be there,
-- as the row's fencer. A prepared XA branch recovered after a restart may
-- name an id that another session has now: with PROCESS (INNODB_TRX),
-- nobody is ended while any transaction has no session (see XA RECOVER).
-- Without PROCESS (INNODB_TRX refused, error 1227; issue 47), the session
-- is looked for among those the definer may see (its own account's), and
-- ended only if the stale term's move came after the server's start
-- (UNIX_TIMESTAMP() - Uptime, readable without a grant): ids are not
-- reused within one run of the server, so it is the session that fenced.
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
