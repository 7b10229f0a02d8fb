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
