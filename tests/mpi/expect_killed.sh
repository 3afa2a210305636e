#!/usr/bin/env bash
# A rank killed mid-scan must end the whole job, with a message naming it,
# in under a minute: runs the driver's "kill" scenario under mpirun.
#   usage: expect_killed.sh MPIEXEC DRIVER [mpiexec flags...]
set -u
mpiexec=$1 driver=$2
shift 2
start=$(date +%s)
out=$(timeout 120 "$mpiexec" "$@" "$driver" kill 2>&1)
rc=$?
elapsed=$(( $(date +%s) - start ))
echo "$out" | tail -n 15
echo "mpirun exit $rc after ${elapsed} s"
if [ "$rc" -eq 124 ]; then echo "FAIL: the job hung (killed by timeout after 120 s)"; exit 1; fi
if [ "$rc" -eq 0 ]; then echo "FAIL: the job ended with 0 although a rank was killed"; exit 1; fi
if [ "$elapsed" -ge 60 ]; then echo "FAIL: the job took ${elapsed} s to end"; exit 1; fi
if ! echo "$out" | grep -Eqi "rank 1|signal 9|killed"; then echo "FAIL: no message names the killed rank"; exit 1; fi
echo "PASS: the killed rank ended the job in ${elapsed} s"
