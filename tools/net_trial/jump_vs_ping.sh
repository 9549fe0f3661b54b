#!/bin/bash
# usage: WORLD=FILE jump_vs_ping.sh LOAM_BINARY PORT  -> a pinger (20 s) beside a jumper (2 moves/s, 15 s) on a copy of WORLD
BIN=$1; P=$2
cd "$(dirname "$0")"
mkdir -p /tmp/net_trial; cp "${WORLD:?set WORLD to the world edit_paint.py built}" /tmp/net_trial/w_$P.loam
setsid $BIN serve --world /tmp/net_trial/w_$P.loam --listen 127.0.0.1:$P > /tmp/net_trial/srv_$P.log 2>&1 < /dev/null &
S=$!
for i in $(seq 900); do grep -q serving /tmp/net_trial/srv_$P.log && break; sleep 0.2; done
python3 pinger.py $P 20 "$(basename $BIN)" > /tmp/net_trial/ping_$P.out 2>&1 &
PP=$!
sleep 3
timeout 60 python3 jumper.py $P 2 15 > /tmp/net_trial/jump_$P.out 2>&1
wait $PP
kill -9 $S 2>/dev/null; wait $S 2>/dev/null
cat /tmp/net_trial/ping_$P.out | cut -c1-300; tail -3 /tmp/net_trial/jump_$P.out
