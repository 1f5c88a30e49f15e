#!/usr/bin/env bash
# A base application with dev, staging and prod variants, walked end to end against a running hubd:
# clones that keep their own overrides through upgrades, a conflict a person decides, a protected path, and
# a Link that carries a database address from each environment's database Unit into its application.
#
#   make run &                                        # or any running hubd
#   export DATABASE_URL=$(.ci/ensure-db hubd)
#   TOKEN=$(./bin/hubd token --org acme --user alice) examples/variants/walkthrough.sh
#
# HUBD (default http://127.0.0.1:8080) names the service; PREFIX (default "shop") prefixes the Spaces' Slugs so
# the walk can run again. It needs curl and jq, and prints what each step shows.
set -euo pipefail

HUBD=${HUBD:-http://127.0.0.1:8080}
PREFIX=${PREFIX:-shop}
: "${TOKEN:?set TOKEN to a service token (./bin/hubd token --org acme --user alice)}"

# call METHOD PATH [BODY [CONTENT-TYPE]]: the answer's body; an answer other than 200 stops the walk.
call() {
	local method=$1 path=$2 body=${3:-} type=${4:-application/json} out status
	out=$(mktemp)
	if [ -n "$body" ]; then
		status=$(curl -sS -o "$out" -w '%{http_code}' -X "$method" "$HUBD/api$path" -H "Authorization: Bearer $TOKEN" \
			-H "Content-Type: $type" --data-binary "$body")
	else
		status=$(curl -sS -o "$out" -w '%{http_code}' -X "$method" "$HUBD/api$path" -H "Authorization: Bearer $TOKEN")
	fi
	if [ "$status" != 200 ]; then
		echo "$method $path answered $status: $(cat "$out")" >&2
		rm -f "$out"
		exit 1
	fi
	cat "$out"
	rm -f "$out"
}
q() { jq -rn --arg v "$1" '$v|@uri'; } # a query parameter's value, escaped
step() { printf '\n== %s\n' "$*"; }

step "Spaces: the base, and one per environment (Label env)"
BASE=$(call POST /space "{\"Slug\": \"$PREFIX-base\"}" | jq -r .SpaceID)
for env in dev staging prod; do
	call POST /space "{\"Slug\": \"$PREFIX-$env\", \"Labels\": {\"env\": \"$env\", \"app\": \"$PREFIX\"}}" >/dev/null
done
space() { call GET "/space?where=$(q "Slug = '$PREFIX-$1'")" | jq -r '.[0].Space.SpaceID'; }
DEV=$(space dev) STAGING=$(space staging) PROD=$(space prod)

step "The base application: one Deployment"
APP=$(call POST "/space/$BASE/unit" '{"Slug": "web", "ToolchainType": "Kubernetes/YAML"}' | jq -r .Unit.UnitID)
call PUT "/space/$BASE/unit/$APP/data" 'apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: web
          image: shop/web:1.0
          env:
            - name: LOG_LEVEL
              value: info
            - name: DB_HOST
              value: unset
' application/yaml | jq -c '{HeadRevisionNum: .Unit.HeadRevisionNum}'

step "Variants: web cloned into every Space labelled app=$PREFIX"
call POST "/unit?where=$(q "UnitID = '$APP'")&where_space=$(q "Labels.app = '$PREFIX'")" '{}' application/merge-patch+json |
	jq -c '.[] | {Space: .Unit.SpaceID, Unit: .Unit.UnitID, UpstreamRevisionNum: .Unit.UpstreamRevisionNum}'
unit_in() { call GET "/space/$1/unit?where=$(q "Slug = 'web'")" | jq -r '.[0].Unit.UnitID'; }
DEV_WEB=$(unit_in "$DEV") STAGING_WEB=$(unit_in "$STAGING") PROD_WEB=$(unit_in "$PROD")

step "Local overrides: staging runs 2 replicas, prod 5 (protected, so no merge ever overwrites it)"
invoke() { # invoke SPACE UNIT QUERY FUNCTION ARG...
	local space=$1 unit=$2 query=$3 fn=$4 args
	shift 4
	args=$(printf '%s\n' "$@" | jq -R '{Value: .}' | jq -s -c .)
	call POST "/space/$space/function/invoke?where=$(q "UnitID = '$unit'")$query" \
		"{\"ToolchainType\": \"Kubernetes/YAML\", \"FunctionInvocations\": [{\"FunctionName\": \"$fn\", \"Arguments\": $args}]}" |
		jq -c '.[] | {Unit: .UnitSlug, Space: .SpaceSlug, Changed: .HasNewMutations}'
}
invoke "$STAGING" "$STAGING_WEB" "" set-replicas 2
invoke "$PROD" "$PROD_WEB" "&protect=true" set-replicas 5

step "Upstream change: the base gets image 1.1 and 3 replicas"
invoke "$BASE" "$APP" "" set-image web shop/web:1.1
invoke "$BASE" "$APP" "" set-replicas 3

step "Upgrade every variant (three-way merge: base = the upstream Revision last merged)"
call PATCH "/unit?upgrade=true&where=$(q "UpstreamUnitID = '$APP'")" '{}' application/merge-patch+json |
	jq -c '.[] | {Space: .Unit.SpaceID, UpstreamRevisionNum: .Unit.UpstreamRevisionNum, Conflicts: [.Unit.Conflicts[] | {Path, Reason}]}'
for pair in "dev:$DEV:$DEV_WEB" "staging:$STAGING:$STAGING_WEB" "prod:$PROD:$PROD_WEB"; do
	IFS=: read -r env sp u <<<"$pair"
	printf '%-8s %s\n' "$env" "$(call GET "/space/$sp/unit/$u/data" | grep -E '^ *(replicas|image):' | sed -E 's/^ +//' | paste -sd' ')"
done

step "A conflict: prod logs at warn, while the base moves to debug"
invoke "$PROD" "$PROD_WEB" "" set-env web LOG_LEVEL warn
invoke "$BASE" "$APP" "" set-env web LOG_LEVEL debug
call PATCH "/space/$PROD/unit/$PROD_WEB?upgrade=true" '{}' application/merge-patch+json |
	jq -c '{Conflicts: [.Unit.Conflicts[] | {Path, Reason, UpstreamValue, LocalValue}]}'

step "Prod keeps its own value: the conflict is dismissed"
call POST "/space/$PROD/unit/$PROD_WEB/conflicts" '{"Action": "Dismiss"}' | jq -c '{Dismissed, Outstanding: .Conflicts}'
call GET "/space/$PROD/unit/$PROD_WEB/data" | grep -A1 LOG_LEVEL

step "A Link per environment: each web reads its environment's database address"
for pair in "dev:$DEV:$DEV_WEB" "staging:$STAGING:$STAGING_WEB" "prod:$PROD:$PROD_WEB"; do
	IFS=: read -r env sp u <<<"$pair"
	DB=$(call POST "/space/$sp/unit" '{"Slug": "database", "ToolchainType": "AppConfig/YAML"}' | jq -r .Unit.UnitID)
	call PUT "/space/$sp/unit/$DB/data" "host: db.$env.internal
port: 5432
" application/yaml >/dev/null
	call POST "/space/$sp/link" "{\"Slug\": \"web-database\", \"FromUnitID\": \"$u\", \"ToUnitID\": \"$DB\", \"AutoUpdate\": true,
		\"UpstreamPaths\": [{\"Path\": \"host\"}],
		\"DownstreamPaths\": [{\"ResourceType\": \"apps/v1/Deployment\", \"Path\": \"spec.template.spec.containers.?name=web.env.?name=DB_HOST.value\"}]}" |
		jq -c '{Link: .Slug, UpstreamLastMergedRevisionNum, DownstreamLastMergedRevisionNum, Stale}'
	[ "$env" = prod ] && PROD_DB=$DB
done

step "The prod database moves: the change reaches prod's web in the same write"
call PUT "/space/$PROD/unit/$PROD_DB/data" 'host: db-2.prod.internal
port: 5432
' application/yaml >/dev/null
call GET "/space/$PROD/unit/$PROD_WEB/data" | grep -A1 DB_HOST

step "Why prod's web holds what it holds: the Mutation behind each path"
call GET "/space/$PROD/unit/$PROD_WEB/mutation_sources" |
	jq -c '.Sources[] | select(.Path | test("replicas|image|env")) | {Path, MutationNum, Protected}'
call GET "/space/$PROD/unit/$PROD_WEB/mutation?include=LinkID,MergeSourceID" |
	jq -c '.[] | {MutationNum: .Mutation.MutationNum, Function: .Mutation.FunctionInvocation.FunctionName, MergedFrom: .MergeSource.Slug, Link: .Link.Slug}'
