#!/usr/bin/env bash
# The collectors side by side at 100M rows of state (issue 34): SnapshotBenchmark with 100M upserts
# over 4·10⁹ keys, 2 workers, for each collector given (default: Shenandoah G1 Z), safepoints split
# by safepoints.py into ingest (start -> "ingested"), the 31 captures, the forced full GC before the
# snapshot (not a figure), and the snapshot (its start -> the Snapshotter's "Committed" line). Needs a packaged benchmarks module
# (benchmarks/target/cairn-benchmarks-*.jar and target/lib). Usage:
#   benchmarks/scripts/collectors-100m.sh OUT_DIR [RECORDS] [GC ...]       e.g. /tmp/gc 100000000 Shenandoah G1 Z
# Environment: STORE=s3 to snapshot into s3proxy instead of a local directory; SNAPSHOT_ONLY=false for
# the raw copy and load steps too; HEAP (default 20g); TICK_RECORDS=100000 for ticks of a node's default size
# instead of records/16.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$1"; shift
RECORDS="${1:-100000000}"; shift || true
GCS=("$@"); [ ${#GCS[@]} -eq 0 ] && GCS=(Shenandoah G1 Z)
mkdir -p "$OUT"
CP="$ROOT/benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:$ROOT/benchmarks/target/lib/*"
for gc in "${GCS[@]}"; do
  log="$OUT/$gc.out"
  echo "== $gc: $(date -u +%FT%TZ)" | tee "$log"
  java "-Xmx${HEAP:-20g}" "-XX:+Use${gc}GC" "-Xlog:safepoint:file=$OUT/$gc-safepoint.log:time" \
    "-Dcairn.bench.snapshot-only=${SNAPSHOT_ONLY:-true}" "-Dcairn.bench.store=${STORE:-local}" \
    ${TICK_RECORDS:+"-Dcairn.bench.tick-records=$TICK_RECORDS"} -cp "$CP" \
    io.cairn.benchmarks.snapshot.SnapshotBenchmark 4000000000 "$RECORDS" 2 4 2>&1 \
    | while IFS= read -r line; do echo "$(date -u +%T.%3N) $line"; done | tee -a "$log"
  python3 "$ROOT/benchmarks/scripts/safepoints.py" "$OUT/$gc-safepoint.log" "$log" "ingested" "capture pause" "snapshot 1: starts" \
    '.*Committed snapshot' | tee "$OUT/$gc-phases.txt"
done
