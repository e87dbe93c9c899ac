#!/usr/bin/env bash
# install-deps.sh: install what building and testing need, if it is missing (Debian/Ubuntu, apt-get).
#   libpq-dev + pkg-config  to build the CLibPQ module
#   postgresql              server binaries for the throwaway test cluster (scripts/db-up.sh)
#   openssl                 certificates for the TLS test cluster (scripts/tls-up.sh)
#   pgbouncer               only with the argument `ha`: the pooler of the multi-server setups (scripts/ha-up.sh,
#                           scripts/patroni-ctl.sh)
#   patroni, python3-pysyncobj, curl   only with `ha`: the HA manager of scripts/patroni-ctl.sh with its Raft store
#                           (named, since apt-get would otherwise pick python3-etcd for patroni's "etcd or consul
#                           or ... or pysyncobj" dependency), and curl to ask Patroni's REST API
#   python3-venv            only with the argument `pg18`: a virtualenv for PostgreSQL 18's wheel (scripts/pg18-up.sh)
#   iproute2, procps, python3   only with the argument `faults` (and what `ha` installs): scripts/test-faults.sh
# usage: scripts/install-deps.sh [ha|pg18|faults]
# Does nothing when everything is present. Needs root (or sudo) only when something must be installed.
set -euo pipefail

ha=0
pg18=0
faults=0
case "${1:-}" in
    "") ;;
    ha) ha=1 ;;
    pg18) pg18=1 ;;
    faults) ha=1; faults=1 ;;
    *) echo "usage: $0 [ha|pg18|faults]" >&2; exit 2 ;;
esac

missing=()
[[ -f /usr/include/postgresql/libpq-fe.h ]] || missing+=(libpq-dev)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    missing+=(postgresql)
fi
command -v runuser >/dev/null 2>&1 || missing+=(util-linux)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if (( pg18 )) && ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
    missing+=(python3-venv)
fi
if (( ha )) && ! command -v pgbouncer >/dev/null 2>&1 && [[ ! -x /usr/sbin/pgbouncer ]]; then
    missing+=(pgbouncer)
fi
if (( ha )); then
    [[ -x /usr/bin/patroni && -x /usr/bin/patroni_raft_controller ]] || missing+=(patroni)
    # The Python patroni runs on (/usr/bin/python3), whatever python3 comes first on PATH.
    /usr/bin/python3 -c "import pysyncobj" >/dev/null 2>&1 || missing+=(python3-pysyncobj)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
fi

# scripts/test-faults.sh: network namespaces, veth pairs and qdiscs (ip, tc), ps, and the checker's Python 3.
if (( faults )); then
    command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || missing+=(iproute2)
    command -v ps >/dev/null 2>&1 || missing+=(procps)
    command -v python3 >/dev/null 2>&1 || missing+=(python3)
fi

if (( ${#missing[@]} == 0 )); then
    exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [[ $EUID -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
if (( ha )) && [[ " ${missing[*]} " == *" pgbouncer "* ]]; then
    # Debian's package may start a system pgbouncer (port 6432); ours listens on its own port.
    echo "install-deps: pgbouncer installed; scripts/ha-up.sh runs its own, not the system service" >&2
fi
if (( ha )) && [[ " ${missing[*]} " == *" patroni "* ]]; then
    # Its service waits for /etc/patroni/config.yml, which we do not write.
    echo "install-deps: patroni installed; scripts/patroni-ctl.sh runs its own, not the system service" >&2
fi
