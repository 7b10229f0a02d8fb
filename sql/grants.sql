-- Least privilege for leaderrun: read and compare-and-set the lease rows.
-- No DELETE (terms must only grow) and no DDL (create the table once, as an
-- administrator, with sql/leaderrun.sql or `leaderrun --init`). Once the
-- tables are current, `leaderrun --init` as this user changes nothing and
-- exits 0, so a deploy script may run it on every start.
-- Replace `ops` with your database and 'leaderrun'@'%' with your account:
--   CREATE USER 'leaderrun'@'%' IDENTIFIED BY '...';
GRANT SELECT, INSERT, UPDATE ON ops.leaderrun_lease TO 'leaderrun'@'%';
-- Schema 4, the run history: written by the holders, pruned to the last
-- --history-keep runs per lease (hence DELETE, on this table only).
GRANT SELECT, INSERT, UPDATE, DELETE ON ops.leaderrun_history TO 'leaderrun'@'%';
-- The standbys (optional): each waiter writes its own row and prunes the
-- rows of the dead.
GRANT SELECT, INSERT, UPDATE, DELETE ON ops.leaderrun_standby TO 'leaderrun'@'%';
-- Schema 7, the fence: nobody writes its table but its procedures, which
-- run with their definer's rights (an administrator with PROCESS and
-- CONNECTION ADMIN, who may end any account's sessions; or an account that
-- ends its own only: this one, given CREATE ROUTINE on the database and
-- INSERT, UPDATE on the fence's table, running --init: leaderrun-safety(7),
-- SECURITY).
-- leaderrun moves it to each new term (leaderrun_fence_move), and ends the
-- session of a transaction that still holds it with a stale term
-- (leaderrun_fence_end); SELECT and EXECUTE on the other two let
-- `leaderrun --init` see that the fence is complete. Upgrading from schema
-- 6 takes the INSERT and UPDATE on the table away (sql/upgrade-6-to-7.sql).
GRANT SELECT ON ops.leaderrun_fence TO 'leaderrun'@'%';
GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence_move TO 'leaderrun'@'%';
GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence_end TO 'leaderrun'@'%';
GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence TO 'leaderrun'@'%';
GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence_slot TO 'leaderrun'@'%';

-- The job's own account (not leaderrun's) needs nothing of these tables: it
-- fences through the procedures, and only for the leases whose leaderrun
-- names it (--fence-user nightly; by default a fence admits leaderrun's own
-- account alone).
--   CREATE USER 'nightly'@'%' IDENTIFIED BY '...';
--   GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence TO 'nightly'@'%';
--   GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence_slot TO 'nightly'@'%';
