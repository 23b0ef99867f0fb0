# Sourced by scripts/ensure-services.sh: the servers a merchant runs once one machine is not enough, started on
# loopback where missing. A Redis Cluster of three masters and three replicas at REDIS_CLUSTER_URLS (comma-separated,
# default redis://127.0.0.1:30001 … 30006, the ports of Redis's own utils/create-cluster), and PgBouncer at
# PGBOUNCER_URL (default postgres://postgres@127.0.0.1:6432/test) in transaction mode in front of DATABASE_URL's
# server, trusting loopback. Uses say, run, listening, wait_for and host_of/port_of from ensure-services.sh.

cluster_urls=${REDIS_CLUSTER_URLS:-redis://127.0.0.1:30001,redis://127.0.0.1:30002,redis://127.0.0.1:30003,redis://127.0.0.1:30004,redis://127.0.0.1:30005,redis://127.0.0.1:30006}
pgbouncer_url=${PGBOUNCER_URL:-postgres://postgres@127.0.0.1:6432/test}
IFS=, read -r -a cluster_nodes <<<"$cluster_urls"
cluster_host=$(host_of "${cluster_nodes[0]}")
cluster_ports=()
for node in "${cluster_nodes[@]}"; do cluster_ports+=("$(port_of "$node" 6379)"); done
cluster_where="$cluster_host:${cluster_ports[0]}…${cluster_ports[-1]}"
pgbouncer_host=$(host_of "$pgbouncer_url"); pgbouncer_port=$(port_of "$pgbouncer_url" 6432)
# Where the cluster's nodes.conf files and PgBouncer's configuration live (root's, like /var/lib/redis).
SCALE_DIR=${ENSURE_SERVICES_SCALE_DIR:-/var/lib/payhook-scale}

# cluster_formed: every node listens and, where redis-cli is installed, the first says cluster_state:ok with all
# of them known and half of them replicas (a node that listens but never joined is not a cluster).
cluster_formed() {
  local port
  for port in "${cluster_ports[@]}"; do listening "$cluster_host" "$port" || return 1; done
  command -v redis-cli >/dev/null 2>&1 || return 0
  local cli=(timeout 3 redis-cli -h "$cluster_host" -p "${cluster_ports[0]}") info replicas
  info=$("${cli[@]}" cluster info 2>/dev/null | tr -d '\r')
  replicas=$("${cli[@]}" cluster nodes 2>/dev/null | grep -c ' slave [0-9a-f]')
  [[ $info == *cluster_state:ok* && $info == *"cluster_known_nodes:${#cluster_ports[@]}"* ]] \
    && [ "$replicas" -ge $((${#cluster_ports[@]} / 2)) ]
}

# start_redis_cluster: starts the nodes that do not listen (no persistence; a node timeout of 2 s, so a killed
# master's replica takes over within seconds), then joins them with `redis-cli --cluster create` unless they
# already form one (a node started again rejoins through its nodes.conf).
start_redis_cluster() {
  local fresh=1 port
  for port in "${cluster_ports[@]}"; do listening "$cluster_host" "$port" && fresh=0; done
  say "starting the Redis Cluster on $cluster_where (${#cluster_ports[@]} nodes, no persistence)"
  run mkdir -p "$SCALE_DIR" /var/log/redis
  for port in "${cluster_ports[@]}"; do
    listening "$cluster_host" "$port" && continue
    # None listens: a new cluster, which the nodes.conf of an earlier one would only get in the way of.
    [ "$fresh" = 1 ] && run rm -f "$SCALE_DIR/nodes-$port.conf"
    run redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --cluster-enabled yes \
      --cluster-config-file "nodes-$port.conf" --cluster-node-timeout 2000 --save "" --appendonly no \
      --dir "$SCALE_DIR" --logfile "/var/log/redis/payhook-cluster-$port.log"
  done
  for port in "${cluster_ports[@]}"; do wait_for "$cluster_host" "$port" "Redis Cluster node" || return 1; done
  [ "$DRY_RUN" != 1 ] && cluster_formed && return 0
  local addresses=()
  for port in "${cluster_ports[@]}"; do addresses+=("$cluster_host:$port"); done
  run redis-cli --cluster create "${addresses[@]}" --cluster-replicas 1 --cluster-yes >/dev/null \
    || { say "redis-cli --cluster create failed"; return 1; }
  [ "$DRY_RUN" = 1 ] && return 0
  for _ in $(seq 1 30); do cluster_formed && return 0; sleep 1; done
  say "the Redis Cluster on $cluster_where did not reach cluster_state:ok"; return 1
}

# start_pgbouncer: PgBouncer in transaction mode on pgbouncer_port, every database passed on to PostgreSQL at
# pg_host:pg_port, users trusted (loopback only), run as the postgres user (PgBouncer refuses to run as root).
start_pgbouncer() {
  local ini="$SCALE_DIR/pgbouncer.ini" version
  say "starting PgBouncer on $pgbouncer_host:$pgbouncer_port (transaction mode) in front of $pg_host:$pg_port"
  run mkdir -p "$SCALE_DIR/pgbouncer"
  # 1.21 and later can keep protocol-level prepared statements; 0 turns that off, as in the 1.18 of Debian 12,
  # so the tests meet the pooler a merchant most often has.
  local prepared=''
  if command -v pgbouncer >/dev/null 2>&1; then
    version=$(pgbouncer --version | sed -n 's/^PgBouncer \([0-9]*\.[0-9]*\).*/\1/p')
    if [ -n "$version" ] && [ "$(printf '1.21\n%s\n' "$version" | sort -V | head -n1)" = 1.21 ]; then
      prepared='max_prepared_statements = 0'
    fi
  fi
  if [ "$DRY_RUN" = 1 ]; then
    say "would write $ini (pool_mode = transaction, auth_type = trust, listen_port = $pgbouncer_port)"
  else
    printf '"postgres" ""\n' >"$SCALE_DIR/pgbouncer/userlist.txt"
    cat >"$ini" <<EOF
[databases]
* = host=$pg_host port=$pg_port

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $pgbouncer_port
unix_socket_dir =
auth_type = trust
admin_users = postgres
auth_file = $SCALE_DIR/pgbouncer/userlist.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
ignore_startup_parameters = extra_float_digits,options
logfile = $SCALE_DIR/pgbouncer/pgbouncer.log
pidfile = $SCALE_DIR/pgbouncer/pgbouncer.pid
$prepared
EOF
  fi
  run chown -R postgres "$SCALE_DIR/pgbouncer"
  run runuser -u postgres -- pgbouncer -d "$ini"
  wait_for "$pgbouncer_host" "$pgbouncer_port" PgBouncer
}
