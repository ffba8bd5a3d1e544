#!/usr/bin/env bash
# Throwaway probe for docs/research/cluster-plan.md: one etcd member on loopback, a second one
# added as a learner and promoted, both under `setpriv --pdeathsig KILL`, both stopped by pid.
# No etcdctl is installed (Debian's etcd-server ships the daemon only), so the probe talks to
# etcd's JSON gateway (/v3/...) with curl, as Quiver would (cluster-plan.md, decision 1).
# Every wait is bounded. Usage: bash docs/research/cluster/etcd-probe.sh
# Output of the run quoted in cluster-plan.md 2.5: docs/research/cluster/etcd-probe.out
set -euo pipefail

DIR=$(mktemp -d /tmp/clusterplan-etcd.XXXXXX)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
now_ms() { date +%s%3N; }
P1=$(free_port); C1=$(free_port); P2=$(free_port); C2=$(free_port)
TOKEN="quiver-probe-$$"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# POST JSON to a member's gateway; uint64 ids travel as decimal strings in etcd's JSON.
api() { curl -sS --max-time 5 -X POST "http://127.0.0.1:$1$2" -d "$3"; }
wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...: polls every 50 ms until COMMAND succeeds
  local bound=$1 what=$2; shift 2
  local start; start=$(now_ms)
  while ! "$@" >/dev/null 2>&1; do
    if (( $(now_ms) - start > bound * 1000 )); then echo "TIMEOUT waiting for $what"; exit 1; fi
    sleep 0.05
  done
  echo "  $what after $(( $(now_ms) - start )) ms"
}
healthy() { curl -sf --max-time 1 "http://127.0.0.1:$1/health" | grep -q '"true"'; }

echo "ports: peer1=$P1 client1=$C1 peer2=$P2 client2=$C2 dir=$DIR"

# --- member 1: a new one-member cluster -------------------------------------------------------
t0=$(now_ms)
setpriv --pdeathsig KILL etcd --name p1 --data-dir "$DIR/p1" \
  --listen-peer-urls "http://127.0.0.1:$P1" --initial-advertise-peer-urls "http://127.0.0.1:$P1" \
  --listen-client-urls "http://127.0.0.1:$C1" --advertise-client-urls "http://127.0.0.1:$C1" \
  --initial-cluster "p1=http://127.0.0.1:$P1" --initial-cluster-state new --initial-cluster-token "$TOKEN" \
  --heartbeat-interval 100 --election-timeout 1000 --log-level warn --logger zap \
  >"$DIR/p1.log" 2>&1 &
PIDS+=($!)
echo "started p1 pid ${PIDS[0]}"
wait_for 20 "p1 healthy" healthy "$C1"

api "$C1" /v3/kv/put '{"key":"'"$(echo -n quiver/probe | base64)"'","value":"'"$(echo -n '{"x":1}' | base64)"'"}' >/dev/null
echo "status p1: $(api "$C1" /v3/maintenance/status '{}')"

# --- compare-and-swap: a put that only wins if the key is still at the revision read ------------
K=$(echo -n quiver/cas | base64)
REV=$(api "$C1" /v3/kv/put '{"key":"'"$K"'","value":"'"$(echo -n v1 | base64)"'"}' | jq -r .header.revision)
cas() { api "$C1" /v3/kv/txn '{"compare":[{"key":"'"$K"'","target":"MOD","result":"EQUAL","mod_revision":"'"$1"'"}],"success":[{"request_put":{"key":"'"$K"'","value":"'"$(echo -n "$2" | base64)"'"}}],"failure":[{"request_range":{"key":"'"$K"'"}}]}' | jq -c '{succeeded, revision: .header.revision}'; }
echo "cas at mod_revision $REV: $(cas "$REV" v2)"
echo "same cas again (stale revision): $(cas "$REV" v3)"
# create-only: a key that must not exist yet (CREATE revision 0)
create() { api "$C1" /v3/kv/txn '{"compare":[{"key":"'"$(echo -n "$1" | base64)"'","target":"CREATE","result":"EQUAL","create_revision":"0"}],"success":[{"request_put":{"key":"'"$(echo -n "$1" | base64)"'","value":"MQ=="}}]}' | jq -c '{succeeded}'; }
echo "create quiver/c/a: $(create quiver/c/a); again: $(create quiver/c/a)"
# a lease: a key that disappears when its owner stops renewing it
LEASE=$(api "$C1" /v3/lease/grant '{"TTL":"2"}' | jq -r .ID)
api "$C1" /v3/kv/put '{"key":"'"$(echo -n quiver/live/1 | base64)"'","value":"MQ==","lease":"'"$LEASE"'"}' >/dev/null
live_gone() { [[ "$(api "$C1" /v3/kv/range '{"key":"'"$(echo -n quiver/live/1 | base64)"'"}' | jq -r '.count // "0"')" == 0 ]]; }
wait_for 6 "leased key gone (TTL 2 s, never renewed)" live_gone

# --- member 2: added as a learner through member 1, then started with state `existing` ---------
t1=$(now_ms)
ADD=$(api "$C1" /v3/cluster/member/add '{"peerURLs":["http://127.0.0.1:'"$P2"'"],"isLearner":true}')
echo "member add: $ADD"
ID2=$(echo "$ADD" | jq -r '.member.ID')
echo "learner id $ID2 (added in $(( $(now_ms) - t1 )) ms)"

# A learner counts in the member list but not in the quorum: the one-member cluster still commits.
api "$C1" /v3/kv/put '{"key":"'"$(echo -n quiver/during-add | base64)"'","value":"'"$(echo -n 2 | base64)"'"}' >/dev/null && echo "  writes still commit with the learner not yet started"

# Promotion before the learner runs is refused (the text Quiver must recognise and retry on).
echo "early promote: $(api "$C1" /v3/cluster/member/promote '{"ID":"'"$ID2"'"}')"

t2=$(now_ms)
setpriv --pdeathsig KILL etcd --name p2 --data-dir "$DIR/p2" \
  --listen-peer-urls "http://127.0.0.1:$P2" --initial-advertise-peer-urls "http://127.0.0.1:$P2" \
  --listen-client-urls "http://127.0.0.1:$C2" --advertise-client-urls "http://127.0.0.1:$C2" \
  --initial-cluster "p1=http://127.0.0.1:$P1,p2=http://127.0.0.1:$P2" --initial-cluster-state existing \
  --initial-cluster-token "$TOKEN" --heartbeat-interval 100 --election-timeout 1000 --log-level warn --logger zap \
  >"$DIR/p2.log" 2>&1 &
PIDS+=($!)
echo "started p2 pid ${PIDS[1]}"

# What a learner serves: status yes, linearizable reads and writes no.
learner_status() { api "$C2" /v3/maintenance/status '{}' | grep -q isLearner; }
wait_for 20 "p2 answers status as a learner" learner_status
echo "status p2 (learner): $(api "$C2" /v3/maintenance/status '{}')"
echo "put on learner: $(api "$C2" /v3/kv/put '{"key":"'"$(echo -n quiver/x | base64)"'","value":"eA=="}')"
echo "linearizable range on learner: $(api "$C2" /v3/kv/range '{"key":"'"$(echo -n quiver/probe | base64)"'"}')"
echo "serializable range on learner: $(api "$C2" /v3/kv/range '{"key":"'"$(echo -n quiver/probe | base64)"'","serializable":true}' | jq -c '.kvs[0].value')"

promoted() { api "$C1" /v3/cluster/member/promote '{"ID":"'"$ID2"'"}' | grep -q '"members"'; }
wait_for 30 "p2 promoted to voter (retrying every 50 ms)" promoted
echo "learner start -> voter: $(( $(now_ms) - t2 )) ms"
echo "members: $(api "$C1" /v3/cluster/member/list '{}' | jq -c '[.members[] | {name, ID, isLearner, peerURLs}]')"
echo "put on p2 now: $(api "$C2" /v3/kv/put '{"key":"'"$(echo -n quiver/x | base64)"'","value":"eA=="}' | jq -c .header.revision)"
echo "status p2 (voter): $(api "$C2" /v3/maintenance/status '{}')"

# --- restart p2 with its stored identity: same flags, the data dir decides, the cluster flags are ignored
kill "${PIDS[1]}"; wait "${PIDS[1]}" 2>/dev/null || true
t3=$(now_ms)
setpriv --pdeathsig KILL etcd --name p2 --data-dir "$DIR/p2" \
  --listen-peer-urls "http://127.0.0.1:$P2" --initial-advertise-peer-urls "http://127.0.0.1:$P2" \
  --listen-client-urls "http://127.0.0.1:$C2" --advertise-client-urls "http://127.0.0.1:$C2" \
  --initial-cluster "ignored=http://127.0.0.1:1" --initial-cluster-state new \
  --heartbeat-interval 100 --election-timeout 1000 --log-level warn --logger zap \
  >>"$DIR/p2.log" 2>&1 &
PIDS[1]=$!
wait_for 20 "p2 restarted from its data dir (bogus --initial-cluster ignored)" healthy "$C2"
echo "  restart took $(( $(now_ms) - t3 )) ms; member list from p2: $(api "$C2" /v3/cluster/member/list '{}' | jq -c '[.members[].name]')"

# --- pdeathsig: a parent that dies by SIGKILL takes its etcd with it ---------------------------
P3=$(free_port); C3=$(free_port)
bash -c 'setpriv --pdeathsig KILL etcd --name orphan --data-dir "'"$DIR"'/p3" --listen-peer-urls http://127.0.0.1:'"$P3"' --initial-advertise-peer-urls http://127.0.0.1:'"$P3"' --listen-client-urls http://127.0.0.1:'"$C3"' --advertise-client-urls http://127.0.0.1:'"$C3"' --initial-cluster orphan=http://127.0.0.1:'"$P3"' --log-level warn --logger zap >/dev/null 2>&1 & echo $! > "'"$DIR"'/p3.pid"; wait' &
PARENT=$!
wait_for 20 "orphan-test etcd healthy" healthy "$C3"
CHILD=$(cat "$DIR/p3.pid")
kill -9 "$PARENT"
# kill -0 also succeeds on a zombie (killed, not yet reaped by init): look at the state instead.
gone() { local st; st=$(ps -o stat= -p "$CHILD" 2>/dev/null || true); [[ -z "$st" || "$st" == Z* ]]; }
wait_for 5 "etcd $CHILD gone after SIGKILL of its parent $PARENT" gone

# --- stop both members by pid -------------------------------------------------------------------
for p in "${PIDS[@]}"; do kill "$p"; done
for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
PIDS=()
echo "stopped; total $(( $(now_ms) - t0 )) ms; logs in $DIR"
rm -rf "$DIR"
