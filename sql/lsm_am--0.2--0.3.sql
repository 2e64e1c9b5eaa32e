-- lsm_am 0.2 -> 0.3: ordinary roles may use the lsm_am schema (operator
-- classes, functions; each function checks its own privileges).  The on-disk
-- format is unchanged.
\echo Use "ALTER EXTENSION lsm_am UPDATE TO '0.3'" to load this file. \quit

GRANT USAGE ON SCHEMA lsm_am TO PUBLIC;
