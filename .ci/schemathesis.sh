#!/usr/bin/env bash
# Fuzz the running API against its own OpenAPI document with schemathesis (every check),
# and fail on any finding: a 5xx, or a status, media type, header or body the document
# does not declare. Run by .ci/run after `cargo test`; runnable on its own.
#
# Every phase runs, the stateful one included: it chains calls along the document's links
# (a create's or a list's answer → the operations on the record it names), so that path
# ids name records the run made (.ci/schemathesis.toml, [phases.stateful]).
#
# It starts the debug binary that `cargo test` has just built (the integration tests
# need it, so it is there and fresh) on a throwaway SQLite database, and fuzzes as the
# bootstrap administrator inside a subtenant created for the run (see below).
#
# Environment:
#   SCHEMATHESIS_MAX_EXAMPLES  per operation and phase (default 30: about a minute)
#   SCHEMATHESIS_TIMEOUT       seconds; a run that takes longer fails (default 420: the
#                              phases took 175 s on a 2-core machine on 2026-11-23; 120 s
#                              on 2026-12-02, 7 s of it the stateful phase's 51 scenarios)
#   SCHEMATHESIS_SEED          fixed by default, so that a run is repeatable
#   SCHEMATHESIS_DATABASE_URL  an empty PostgreSQL database to fuzz instead of SQLite
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

st_version=4.32.5
venv=$root/target/ci-venv
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -qx "schemathesis, version $st_version"; then
  echo "Installing schemathesis $st_version into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$st_version"
fi

# A no-op after `cargo test` (same profile, same artefact); builds it when run alone.
cargo build --quiet --bin safetrack
bin=$root/target/debug/safetrack

work=$root/target/schemathesis
rm -rf "$work"
mkdir -p "$work/data"
port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
admin_email=fuzz-admin@safetrack.test
admin_password=fuzz-admin-password-1

# The server runs with its defaults, lockout included: schemathesis' ignored_auth check
# sends no credentials, or a made-up one that names no account, so it never counts as
# a failed login of the administrator (checked with 4.32.5: the run is the same with the
# default threshold of 5 as with an unreachable one).
database=()
if [ -n "${SCHEMATHESIS_DATABASE_URL:-}" ]; then database=(--database-url "$SCHEMATHESIS_DATABASE_URL"); fi
"$bin" serve --listen "127.0.0.1:$port" --data-dir "$work/data" "${database[@]}" \
  --admin-email "$admin_email" --admin-password "$admin_password" >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT

# Every /V2 path starts with the tenant; random codes only ever meet a 404, so the run
# pins `tenantVarCode` to a subtenant of the root made for it. The administrator's own
# account lives in the root tenant, out of reach of the fuzzed user paths (a PUT on it
# could change the password the run authenticates with), and the subtenant gets a child
# of its own so that DELETE of the pinned tenant is always refused (409).
fuzz_tenant=$("$venv/bin/python" - "$base" "$admin_email" "$admin_password" <<'EOF'
import sys, time, requests
base, user, password = sys.argv[1], sys.argv[2], sys.argv[3]
for _ in range(100):
    try:
        if requests.get(f"{base}/healthz", timeout=1).ok:
            break
    except requests.ConnectionError:
        pass
    time.sleep(0.1)
else:
    sys.exit("the server did not start")
def subtenant(parent, description):
    r = requests.post(f"{base}/V2/{parent}", json={"Description": description}, auth=(user, password))
    r.raise_for_status()
    return r.json()["TenantCode"]
tenant = subtenant("1000", "schemathesis")
subtenant(tenant, "keeps the fuzzed tenant from being deleted")
print(tenant)
EOF
)

cd "$work" # schemathesis keeps .hypothesis/ and .schemathesis/ in the working directory
started=$(date +%s)
status=0
SAFETRACK_FUZZ_TENANT=$fuzz_tenant SAFETRACK_CI_DIR=$root/.ci timeout "${SCHEMATHESIS_TIMEOUT:-420}" \
  "$venv/bin/schemathesis" --config-file "$root/.ci/schemathesis.toml" run "$base/openapi.json" \
  --phases examples,coverage,fuzzing,stateful --checks all --auth "$admin_email:$admin_password" \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-30}" --seed "${SCHEMATHESIS_SEED:-20261123}" \
  --report junit --report-dir "$work/report" --no-color || status=$?
if [ "$status" -eq 124 ]; then
  echo "schemathesis: stopped after ${SCHEMATHESIS_TIMEOUT:-420} s; lower SCHEMATHESIS_MAX_EXAMPLES or find what is slow"
fi
echo "schemathesis: exit $status after $(($(date +%s) - started)) s (server log: $work/server.log)"
exit "$status"
