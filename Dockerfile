# syntax=docker/dockerfile:1
# ferry as a container image: a static (musl) binary on an empty base image, run as a non-root
# user, serving on 0.0.0.0:8080 the book's curation example (docs/src/curating.md) with one API
# key (packaging/docker/ferry.yaml: beyond loopback, `ferry serve` refuses to start without an
# `auth:` section). This repository's CI does not build it (it has no image registry).
#
#   docker build -t ferry .
#   docker run --rm -p 8080:8080 \
#       -e FERRY_API_KEY_SHA256="$(printf %s "$KEY" | sha256sum | cut -d' ' -f1)" \
#       -e FERRY_ALLOWED_HOSTS=mcp.example.com ferry
#
# Clients then send `Authorization: Bearer $KEY` to http://mcp.example.com:8080/mcp (or to the
# TLS proxy in front). To serve your API, mount a folder holding your ferry.yaml and its
# document at /etc/ferry (`-v "$PWD/config:/etc/ferry:ro"`); every FERRY_* variable is a flag
# of `ferry serve`, and the curation's secrets ({env: VAR}) are passed the same way.

FROM rust:1.95-alpine AS build
RUN apk add --no-cache gcc musl-dev linux-headers ca-certificates
WORKDIR /src
COPY . .
# An explicit musl target with a static C runtime: the binary needs no library at all. With
# --target, the flag applies to ferry only, not to build scripts and proc macros.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    target="$(uname -m)-unknown-linux-musl" \
    && RUSTFLAGS="-C target-feature=+crt-static" \
        cargo build --release --locked --bin ferry --target "$target" \
    && install -D -m 0755 "target/$target/release/ferry" /out/usr/bin/ferry
# The configuration, and the trust store ferry checks an https upstream's certificate against.
RUN install -D -m 0644 packaging/docker/ferry.yaml /out/etc/ferry/ferry.yaml \
    && install -D -m 0644 packaging/example/openapi.yaml /out/etc/ferry/openapi.yaml \
    && install -D -m 0644 /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/ca-certificates.crt \
    && /out/usr/bin/ferry check --config /out/etc/ferry/ferry.yaml

FROM scratch
COPY --from=build /out/ /
# No account database in the image: a numeric user and group, neither of them root.
USER 65532:65532
ENV FERRY_CONFIG=/etc/ferry/ferry.yaml
EXPOSE 8080
# Stopping the container sends SIGTERM: ferry lets calls in flight finish for at most
# --shutdown-timeout (30 s), so give `docker stop` that long (`-t 35`).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/ferry", "serve", "--listen", "0.0.0.0:8080"]
