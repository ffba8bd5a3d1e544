#!/bin/sh
# Throwaway: wall time of the steps a Quiver start runs, each in a fresh process, 3 times each.
# Usage: sh docs/research/profile-server/startup-steps.sh   (from the repository root)
t() { label=$1; shift; for i in 1 2 3; do s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); printf '%s\t%d ms\n' "$label" $(( (e - s) / 1000000 )); done; }
t 'node -e 0' node -e 0
t 'node --import tsx -e 0' node --import tsx -e 0
t 'tsx + import api/validator.ts (Ajv compile)' node --import tsx -e "await import('./src/api/validator.ts')"
t 'tsx + import server/app.ts (routes, no listen)' node --import tsx -e "await import('./src/server/app.ts')"
t 'tsx + import worker/shard-worker.ts graph (shard.ts)' node --import tsx -e "await import('./src/shard/shard.ts')"
t 'tsx + import collection/manager.ts' node --import tsx -e "await import('./src/collection/manager.ts')"
