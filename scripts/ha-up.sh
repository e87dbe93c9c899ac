#!/usr/bin/env bash
# ha-up.sh: start (creating it if needed) the multi-server test setup on 127.0.0.1; root-safe.
#
# usage: scripts/ha-up.sh        prints seven shell-sourceable lines on stdout, nothing else:
#   HA_PRIMARY_URL=postgresql://corevalue@127.0.0.1:<primary>/corevalue
#   HA_STANDBY_URL=postgresql://corevalue@127.0.0.1:<standby>/corevalue
#   HA_MULTI_URL=postgresql://corevalue@127.0.0.1:<A>,127.0.0.1:<B>/corevalue?target_session_attrs=read-write
#   HA_STANDBY_PREFER_URL=...same two hosts...?target_session_attrs=prefer-standby
#   HA_PGBOUNCER_URL=postgresql://corevalue@127.0.0.1:<pgbouncer>/corevalue
#   HA_TLS_MULTI_URL='host=localhost,localhost hostaddr=127.0.0.1,127.0.0.1 port=<A>,<B> dbname=corevalue
#       user=corevalue_tls passfile=<.db/ha/tls/passfile> target_session_attrs=read-write sslmode=verify-full
#       sslrootcert=<.db/ha/tls/ca.crt> channel_binding=require'   (one line: both nodes as a managed database
#       takes them, TLS checked against the throwaway authority, a SCRAM password from the passfile)
#   HA_CTL=<absolute path of scripts/ha-ctl.sh>   (failover, restart-standby, ...: see that script)
#
# Under .db/ha (git-ignored): node A, created with initdb, the primary at first; node B, a streaming
# standby made with pg_basebackup -R and a physical replication slot; synchronous replication
# (synchronous_standby_names = '*', synchronous_commit = on), so a commit the primary acknowledged is on
# the standby too; and pgbouncer in transaction mode, pointing at the current primary. Both nodes also take
# TLS (a throwaway authority and a server certificate for localhost and 127.0.0.1, made with openssl), and
# the role corevalue_tls logs in over TLS with a SCRAM-SHA-256 password only. Three free ports
# from 25430 up (or $CV_HA_PORT; below the ephemeral range), kept in .db/ha/state. Progress goes to stderr. If everything is already
# running, the same lines are printed again; what is down is started (a node that is neither the primary
# nor a standby, as after `ha-ctl.sh failover --no-rebuild`, is rebuilt as the standby).
# As root, initdb, postgres and pgbouncer run as the `postgres` OS user ($CV_DB_RUN_AS).
# The work is done by `scripts/ha-ctl.sh up`, so that one script knows how to start and rebuild a node.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/scripts/install-deps.sh" ha
exec "$ROOT/scripts/ha-ctl.sh" up
