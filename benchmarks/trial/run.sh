#!/usr/bin/env bash
# A trial as a user runs it (about 4 minutes): `./cairn run` on a local store, reading a Kafka topic
# of upserts and tombstones (a backlog, then live records), with the traffic of OPERATIONS.md on it
# (status and metrics polls, SELECTs over HTTP and psql, CREATE/DROP of a view every 2 s, snapshots
# by hand and on a 20 s schedule, bad SQL, SQL nested 2,000 deep, a client sending a byte a second, a 50 MB body), a broker restart, `kill -9`, a batch file
# that only the newest snapshot holds damaged, a restart that must fall back, and the view compared
# with a naive oracle (three views: per customer COUNT, SUM, MIN, MAX; the customers above 1.05 times
# the average, a scalar subquery inside arithmetic; COUNT, MIN and MAX over all orders). Ends with a SIGTERM stop and one cold `cairn recover --until-caught-up`.
#
#   benchmarks/trial/run.sh [WORKDIR]      (from anywhere; WORKDIR default: a new /tmp/cairn-trial.*)
#
# Prints PASS or FAIL with what differed; the node logs, the traffic failures (with times) and
# the recovery reports stay in WORKDIR. Ports: HTTP 17077, pgwire 16875 (127.0.0.1).
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
W="${1:-$(mktemp -d /tmp/cairn-trial.XXXXXX)}"
mkdir -p "$W"
W="$(cd "$W" && pwd)"
CAIRN="$ROOT/cairn"
HTTP=http://127.0.0.1:17077
PIDS=()
log() { echo "$(date +%T) $*" | tee -a "$W/trial.log"; }
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  touch "$W/stop" "$W/stop-kafka"
  [ -n "${KPID:-}" ] && wait "$KPID" 2>/dev/null
}
trap cleanup EXIT

"$CAIRN" --version >/dev/null || exit 1 # builds the distribution when needed
BENCH_JAR="$ROOT/benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar"
if [ ! -e "$BENCH_JAR" ] || [ -n "$(find "$ROOT/benchmarks/src/main" -newer "$BENCH_JAR" -type f -print -quit)" ]; then
  (cd "$ROOT" && mvn -B -q -ntp -DskipTests package -pl benchmarks -am) || exit 1
fi

log "workdir $W"
java -cp "$BENCH_JAR:$ROOT/benchmarks/target/lib/*" io.cairn.benchmarks.trial.TrialKafka "$W" 400000 240000 20000 20000 42 \
  > "$W/kafka.log" 2>&1 &
KPID=$!
for _ in $(seq 1 120); do [ -e "$W/bootstrap" ] && break; sleep 1; done
[ -e "$W/bootstrap" ] || { log "FAIL: the trial broker did not start (kafka.log)"; exit 1; }
BOOT=$(cat "$W/bootstrap")
log "broker at $BOOT, backlog produced"

cat > "$W/cairn.yaml" <<EOF
store:
  uri: file://$W/store
snapshots:
  cron: "0/20 * * * * ?"
http:
  port: 17077
pgwire:
  port: 16875
init:
  - CREATE SOURCE orders FROM KAFKA (brokers = '$BOOT', topic = 'orders') FORMAT JSON ENVELOPE UPSERT (id BIGINT, customer BIGINT, amount BIGINT, PRIMARY KEY (id))
  - CREATE MATERIALIZED VIEW by_customer AS SELECT customer, COUNT(*) AS n, SUM(amount) AS total, MIN(amount) AS lo, MAX(amount) AS hi FROM orders GROUP BY customer
  - CREATE MATERIALIZED VIEW big AS SELECT customer, total FROM by_customer WHERE total > 1.05 * (SELECT AVG(total) FROM by_customer)
  - CREATE MATERIALIZED VIEW overall AS SELECT COUNT(*) AS n, MIN(amount) AS lo, MAX(amount) AS hi FROM orders
EOF

start_node() { # $1: log name
  (cd "$W" && exec "$CAIRN" run -c cairn.yaml > "$W/$1.log" 2>&1) &
  NPID=$!
  PIDS+=("$NPID")
  # HTTP answers from the first second (status RECOVERING); the node serves once it is ready
  for _ in $(seq 1 120); do curl -sf -o /dev/null "$HTTP/health/ready" && return 0; sleep 0.5; done
  log "FAIL: node ($1) did not serve within 60 s"; exit 1
}

# one traffic loop: $1 name, $2 pause (s), then the command; a failure is logged with its time
loop() {
  local name=$1 pause=$2; shift 2
  ( while [ ! -e "$W/stop" ]; do
      if ! out=$("$@" 2>&1); then echo "$(date +%T.%N | cut -c1-12) $name: ${out:0:300}" >> "$W/traffic-fail.log"; fi
      sleep "$pause"
    done ) &
  PIDS+=("$!")
}
sql() { curl -sf --max-time 30 -X POST --data-binary "$1" "$HTTP/sql?format=csv"; }
bad_sql() { # must answer 400 with a message, not fail anything
  code=$(curl -s -o "$W/bad.out" -w '%{http_code}' --max-time 30 -X POST --data-binary 'SELEC nonsense FROM' "$HTTP/sql")
  [ "$code" = 400 ] || { echo "bad SQL answered $code"; return 1; }
}
deep_sql() { # an expression nested 2,000 deep must be refused with a 400, not take the node down
  local q="SELECT $(printf '(%.0s' $(seq 1 2000))1$(printf ')%.0s' $(seq 1 2000)) FROM orders"
  code=$(curl -s -o "$W/deep.out" -w '%{http_code}' --max-time 30 -X POST --data-binary "$q" "$HTTP/sql")
  [ "$code" = 400 ] || { echo "deep SQL answered $code"; return 1; }
}
slow_client() { # a client that sends its request a byte a second: the node closes it, and everyone else is served
  timeout 20 bash -c 'exec 3<>/dev/tcp/127.0.0.1/17077 || exit 0; printf "GET /status HTTP/1.1\r\n" >&3
    for _ in $(seq 1 15); do printf X >&3 2>/dev/null || exit 0; sleep 1; done' > /dev/null 2>&1
  return 0
}
churn() { # CREATE then DROP a view while data flows
  sql "CREATE MATERIALIZED VIEW churn AS SELECT customer, MAX(amount) AS m FROM orders GROUP BY customer" > /dev/null &&
  sleep 1 && sql "DROP VIEW churn" > /dev/null
}
traffic() {
  loop status1 1 curl -sf --max-time 10 -o /dev/null "$HTTP/status"
  loop status2 1 curl -sf --max-time 10 -o /dev/null "$HTTP/status"
  loop metrics 5 curl -sf --max-time 10 -o /dev/null "$HTTP/metrics"
  loop select-http 2 sql "SELECT * FROM orders WHERE amount > 500"
  loop select-psql 3 psql -X -q -h 127.0.0.1 -p 16875 -c "SELECT customer, total FROM by_customer" -o /dev/null
  loop churn 2 churn
  loop snapshot 15 "$CAIRN" snapshot -c "$W/cairn.yaml"
  loop cli-status 7 "$CAIRN" status -c "$W/cairn.yaml"
  loop bad-sql 5 bad_sql
  loop deep-sql 7 deep_sql
  loop slow-client 1 slow_client
}

start_node node1
log "node 1 serving"
traffic
head -c 52428800 /dev/zero > "$W/big.body"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$W/big.body" "$HTTP/sql")
rm -f "$W/big.body"
log "50 MB body: HTTP $code (want 413)"
[ "$code" = 413 ] || echo "50 MB body answered $code" >> "$W/traffic-fail.log"
sleep 20
log "restarting the broker"
touch "$W/restart-broker"
sleep 30
snaps=$(ls "$W/store/snapshots" 2>/dev/null | wc -l)
log "snapshots so far: $snaps; kill -9 node 1"
kill -9 "$NPID"
KILLED_AT=$(date +%T)
# damage a batch file of the newest committed snapshot, one no older snapshot holds if there is one
manifest=$(ls "$W/store/snapshots/"*.manifest.json | tail -1)
target=""
for f in $(grep -o '"batches/[^"]*\.parquet"' "$manifest" | tr -d '"'); do
  [ -z "$target" ] && target=$f
  if [ "$(grep -l "\"$f\"" "$W/store/snapshots/"*.manifest.json | wc -l)" = 1 ]; then target=$f; break; fi
done
printf '\x00\x01\x02\x03' | dd of="$W/store/$target" bs=1 seek=100 conv=notrunc 2>/dev/null
log "damaged $target of $(basename "$manifest")"
start_node node2
SERVING_AT=$(date +%T)
log "node 2 serving (killed at $KILLED_AT)"
grep -h "fell back\|starting again\|Recovered snapshot\|checksum" "$W/node2.log" | cut -c1-300 | tee -a "$W/trial.log"

for _ in $(seq 1 180); do [ -e "$W/oracle.txt" ] && break; sleep 1; done
[ -e "$W/oracle.txt" ] || { log "FAIL: the live phase did not end"; exit 1; }
result=FAIL
for _ in $(seq 1 60); do
  sql "SELECT customer, n, total, lo, hi FROM by_customer" | tail -n +2 | tr -d '\r' | tr ',' '|' | sort -t'|' -k1,1n > "$W/view.txt"
  sql "SELECT customer, total FROM big" | tail -n +2 | tr -d '\r' | tr ',' '|' | sort -t'|' -k1,1n > "$W/view-big.txt"
  sql "SELECT n, lo, hi FROM overall" | tail -n +2 | tr -d '\r' | tr ',' '|' > "$W/view-overall.txt"
  if cmp -s "$W/view.txt" "$W/oracle.txt" && cmp -s "$W/view-big.txt" "$W/oracle-big.txt" \
      && cmp -s "$W/view-overall.txt" "$W/oracle-overall.txt"; then result=PASS; break; fi
  sleep 1
done
groups=$(wc -l < "$W/oracle.txt")
log "views vs oracle: $result ($(wc -l < "$W/view.txt") rows in by_customer, $groups groups in the oracle;" \
  "$(wc -l < "$W/view-big.txt") of $(wc -l < "$W/oracle-big.txt") in big; overall $(cat "$W/view-overall.txt") vs $(cat "$W/oracle-overall.txt"))"
if ! grep -q "Rejected snapshot .*$(basename "$manifest")" "$W/node2.log"; then
  log "FAIL: node 2 did not reject the snapshot whose batch file was damaged ($(basename "$manifest"))"
  result=FAIL
fi
[ "$result" = PASS ] || { diff "$W/oracle.txt" "$W/view.txt"; diff "$W/oracle-big.txt" "$W/view-big.txt"; } | head -10 | tee -a "$W/trial.log"
touch "$W/stop"
sleep 1
for p in "${PIDS[@]}"; do [ "$p" != "$NPID" ] && kill "$p" 2>/dev/null; done
t0=$(date +%s.%N)
kill -TERM "$NPID"; wait "$NPID" 2>/dev/null
log "SIGTERM stop took $(echo "$(date +%s.%N) - $t0" | bc) s"
t0=$(date +%s.%N)
(cd "$W" && "$CAIRN" recover -c cairn.yaml --until-caught-up --timeout 2m > "$W/recover.txt" 2> "$W/recover.err")
rc=$?
log "cold recover --until-caught-up: exit $rc in $(echo "$(date +%s.%N) - $t0" | bc) s"
fails=$(wc -l < "$W/traffic-fail.log" 2>/dev/null || echo 0)
log "traffic failures: $fails (kill at $KILLED_AT, serving again at $SERVING_AT); by loop:"
[ -e "$W/traffic-fail.log" ] && cut -d' ' -f2 "$W/traffic-fail.log" | sort | uniq -c | tee -a "$W/trial.log"
[ -e "$W/traffic-fail.log" ] && { head -3 "$W/traffic-fail.log"; tail -3 "$W/traffic-fail.log"; } | tee -a "$W/trial.log"
log "$result"
[ "$result" = PASS ] && [ "$rc" = 0 ]
