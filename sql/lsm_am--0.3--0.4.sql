-- lsm_am 0.3 -> 0.4: no catalog change.  0.4 has the same schema, access
-- method, operator classes, functions, views and privileges as 0.3, and the
-- same on-disk format (version 2): 0.3 indexes are read as they are.  The
-- file exists so that ALTER EXTENSION lsm_am UPDATE has a path to 0.4
-- (tests/pgtap/01_catalog.sql checks that the update gives a fresh 0.4's
-- catalog).
\echo Use "ALTER EXTENSION lsm_am UPDATE TO '0.4'" to load this file. \quit
