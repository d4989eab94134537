#!/bin/sh
mkdir -p /logs/verifier
n=$(sh /app/count.sh)
pass=0; [ "$n" = 3 ] && pass=1
printf '{"reward": %s, "lines_ok": %s, "style": 0.5}\n' $pass $pass > /logs/verifier/reward.json
