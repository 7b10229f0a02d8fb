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
-- Schema 6, the fence: leaderrun moves it to each new term, and ends the
-- session of a transaction that holds it with a stale term
-- (leaderrun_fence_end; the other two only let `leaderrun --init` see that
-- the fence is complete).
GRANT SELECT, INSERT, UPDATE ON ops.leaderrun_fence TO 'leaderrun'@'%';
GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence_end TO 'leaderrun'@'%';
GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence TO 'leaderrun'@'%';
GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence_slot TO 'leaderrun'@'%';

-- The job's own account (not leaderrun's) needs nothing of these tables: it
-- fences through the procedures, which run with their definer's rights.
--   CREATE USER 'nightly'@'%' IDENTIFIED BY '...';
--   GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence TO 'nightly'@'%';
--   GRANT EXECUTE ON PROCEDURE ops.leaderrun_fence_slot TO 'nightly'@'%';
