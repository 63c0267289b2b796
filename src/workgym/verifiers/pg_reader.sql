-- Run once per warehouse database, as a superuser (psql -d DB -f pg_reader.sql): functions that
-- run SQL given as a string, or signal other sessions, become unreachable to every role that is
-- not a superuser. The parser guard refuses them by name, but query_to_xml('...') hides the SQL
-- it runs inside a string; this is the engine's own wall. workgym.verifiers.pg_reader reads this
-- file, and `.ci/run` applies it to the test database.
DO $$
DECLARE f regprocedure;
BEGIN
  FOR f IN
    SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'pg_catalog' AND p.proname IN (
      'query_to_xml', 'query_to_xmlschema', 'query_to_xml_and_xmlschema',
      'cursor_to_xml', 'cursor_to_xmlschema',
      'table_to_xml', 'table_to_xmlschema', 'table_to_xml_and_xmlschema',
      'schema_to_xml', 'schema_to_xmlschema', 'schema_to_xml_and_xmlschema',
      'database_to_xml', 'database_to_xmlschema', 'database_to_xml_and_xmlschema',
      'ts_stat', 'ts_rewrite',
      'pg_terminate_backend', 'pg_cancel_backend', 'pg_notify', 'set_config')
  LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
  END LOOP;
END $$;
-- Other sessions' SQL text: a role sees the query of every session of the same role in
-- pg_stat_activity, so an agent's run_sql could read a concurrent verification's gold query.
-- The view and the functions under it become unreadable to ordinary roles (pg_monitor keeps it).
REVOKE SELECT ON pg_catalog.pg_stat_activity FROM PUBLIC;
GRANT SELECT ON pg_catalog.pg_stat_activity TO pg_monitor;
DO $$
DECLARE f regprocedure;
BEGIN
  FOR f IN
    SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'pg_catalog'
      AND p.proname IN ('pg_stat_get_activity', 'pg_stat_get_backend_activity')
  LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO pg_monitor', f);
  END LOOP;
END $$;
