#!/usr/bin/env bash
# What the device tool runs (one command can last at most 10 minutes; the proof can take longer):
#
#     bash tests/gpu/device_run.sh start [SECONDS]    starts gpu_proof.sh in its own session, waits
#     bash tests/gpu/device_run.sh wait  [SECONDS]    waits again (a later call on the same warm machine)
#
# Either way it copies what the proof has written so far into $OUT, prints the summary or the log's
# tail, and exits 0 (passed), 1 (failed), or 3 (still running: call `wait` again).
set -u
mode=${1:-start}
limit=${2:-560}
RES=/tmp/gpu-proof-out
PIDFILE=/tmp/gpu-proof.pid
if [ "$mode" = start ]; then
    rm -rf "$RES" && mkdir -p "$RES"
    setsid nohup bash tests/gpu/gpu_proof.sh "$RES" > "$RES/console.log" 2>&1 < /dev/null &
    echo $! > "$PIDFILE"
fi
[ -f "$PIDFILE" ] || { echo "no proof was started on this machine (fresh machine?)"; exit 1; }
pid=$(cat "$PIDFILE")
t0=$SECONDS
while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - t0)) -lt "$limit" ]; do
    sleep 3
done
if [ -n "${OUT:-}" ]; then
    cp "$RES"/* "$OUT"/ 2>/dev/null
    cp /tmp/gpu-proof/times.txt "$OUT"/ 2>/dev/null
fi
if kill -0 "$pid" 2>/dev/null; then
    echo "STILL RUNNING after ${limit}s (pid $pid); steps so far:"; cat /tmp/gpu-proof/times.txt
    tail -n 5 "$RES/gpu_proof.log"
    exit 3
fi
tail -n 30 "$RES/gpu_proof.log"
[ -f /tmp/gpu-proof/PASSED ] && exit 0 || exit 1
