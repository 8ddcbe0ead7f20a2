#!/usr/bin/env bash
# The recorded curl walkthrough of docs/http.md: serve a world with --journal, drive it with
# curl, kill -9 the server, restart it (replay), export the journal to a scenario file, run it.
# Needs curl and jq.  Run from anywhere:  bash docs/examples/journal-walkthrough.sh
set -e
cd "$(dirname "$0")/../.."
export NO_COLOR=1
PY=${PY:-python}
rm -f /tmp/walkthrough.jsonl
$PY -m clearing_sim serve --world docs/examples/journal-world.yaml --operator-token devtoken1 --port 8716 --journal /tmp/walkthrough.jsonl > /tmp/walkthrough.out &
PID=$!
for i in $(seq 60); do grep -q "serving on" /tmp/walkthrough.out 2>/dev/null && break; sleep 0.5; done
cat /tmp/walkthrough.out
BASE=http://127.0.0.1:8716 OP="Authorization: Bearer devtoken1" J="Content-Type: application/json"
KEY="Authorization: Bearer $(grep 'participant northbank' /tmp/walkthrough.out | awk '{print $NF}')"
ISSUER=$(curl -s -H "$OP" $BASE/sim/v1/participants | jq -c '.data[] | select(.participantName=="Ether Pound")')
ASSET=$(echo "$ISSUER" | jq -c '.assets[0]')
MEMBER_ID=$(curl -s -H "$OP" $BASE/sim/v1/participants | jq -r '.data[] | select(.participantName=="Northbank") | .participantId')
TX=$(curl -s -X POST -H "$KEY" -H "$J" -H "Idempotency-Key: redeem-1" $BASE/api/v1/transactions \
  -d "{\"useCase\": \"redeem\", \"paymentReference\": \"INV-1\", \"source\": {\"amount\": \"100.00\", \"asset\": $ASSET}, \"target\": {\"amount\": \"100.00\", \"asset\": {\"code\": \"GBP\"}}}" | jq -r .data.id)
curl -s -X POST -H "$OP" -H "$J" $BASE/sim/v1/checkpoints -d '{"name": "before-settling"}' | jq -c '.data | {name, at}'
curl -s -X POST -H "$OP" -H "$J" $BASE/sim/v1/clock/advance -d '{"seconds": 120}' | jq -c '.data | {now}'
curl -s -H "$KEY" $BASE/api/v1/transactions/$TX | jq -c '.data | {lifecycleStatus, terminal}'
TX2=$(curl -s -X POST -H "$KEY" -H "$J" $BASE/api/v1/transactions \
  -d "{\"useCase\": \"redeem\", \"paymentReference\": \"INV-2\", \"source\": {\"amount\": \"50.00\", \"asset\": $ASSET}, \"target\": {\"amount\": \"50.00\", \"asset\": {\"code\": \"GBP\"}}}" | jq -r .data.id)
ADMIN="Authorization: Bearer $(curl -s -X POST -H "$OP" -H "$J" $BASE/sim/v1/sessions -d "{\"participantId\": \"$MEMBER_ID\"}" | jq -r .data.token)"
curl -s -X POST -H "$ADMIN" -H "$J" $BASE/api/v1/conformance/run -d "{\"transactionId\": \"$TX2\", \"scenario\": \"failed\"}" | jq -c '.data'
curl -s -X POST -H "$OP" -H "$J" $BASE/sim/v1/clock/advance -d '{"seconds": 120}' > /dev/null
curl -s -H "$KEY" $BASE/api/v1/transactions/$TX2 | jq -c '.data | {lifecycleStatus, parked}'
curl -s -X POST -H "$OP" $BASE/sim/v1/operator/transactions/$TX2/resolve | jq -c '.data | {lifecycleStatus, parked}'
curl -s -X POST -H "$OP" -H "$J" $BASE/sim/v1/clock/advance -d '{"seconds": 120}' > /dev/null
curl -s -H "$KEY" $BASE/api/v1/transactions/$TX2 | jq -c '.data | {lifecycleStatus, parked}'
curl -s -H "$OP" $BASE/sim/v1/digest | jq -c .data
kill -9 $PID; wait $PID || true
echo "--- restart after kill -9"
$PY -m clearing_sim serve --world docs/examples/journal-world.yaml --operator-token devtoken1 --port 8716 --journal /tmp/walkthrough.jsonl > /tmp/walkthroughb.out &
PID=$!
for i in $(seq 60); do grep -q "replayed" /tmp/walkthroughb.out 2>/dev/null && break; sleep 0.5; done
grep journal /tmp/walkthroughb.out
curl -s -H "$OP" $BASE/sim/v1/digest | jq -c .data
kill -INT $PID; wait $PID || true
$PY -m clearing_sim journal show /tmp/walkthrough.jsonl
$PY -m clearing_sim journal export /tmp/walkthrough.jsonl --world docs/examples/journal-world.yaml --operator-token devtoken1 --scenario scenarios/journal-walkthrough-redeem-park-fix.yaml --name "a curl session recorded by serve --journal: a redeem settles, one armed to fail parks and the operator's fix settles it"
$PY -m clearing_sim run scenarios/journal-walkthrough-redeem-park-fix.yaml
