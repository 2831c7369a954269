# The backgammon game service: `backgammond` with every shipped variant
# plugin.
#
#     docker build -t backgammond .
#     docker run --rm -p 127.0.0.1:50051:50051 -v backgammon-data:/var/lib/backgammon backgammond
#
# Layout inside the image (see README.md, "Container image"):
#   /usr/local/bin/backgammond          the server (also its own health check)
#   /opt/backgammon/plugins/            shipped variant plugins, and their computer
#                                       players' nets beside them (read-only)
#   /opt/backgammon/extra-plugins/      mount a folder of your own plugins here;
#                                       files dropped in are picked up live
#   /var/lib/backgammon/                games database and server key (a volume)
#
# Stages: chef (toolchain + cargo-chef), planner (dependency recipe),
# builder (dependencies as a cached layer, then the workspace; the files
# the image ships end up in /out) and runtime.
#
# On machines with no registry, scripts/build-image-local builds the same
# runtime stage from binaries built outside Docker (the `ARTIFACTS` and
# `RUNTIME_BASE` build arguments); keep everything from the runtime stage
# on free of RUN instructions, since that base has no shell.

ARG RUST_VERSION=1.95
# glibc is required: plugins are loaded with dlopen. Plugins you build
# yourself must target the same glibc (Debian 12) and plugin ABI.
ARG RUNTIME_BASE=gcr.io/distroless/cc-debian12:nonroot
ARG ARTIFACTS=builder

FROM rust:${RUST_VERSION}-slim-bookworm AS chef
RUN cargo install cargo-chef --locked --version 0.1.78
WORKDIR /src

FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS builder
COPY --from=planner /src/recipe.json recipe.json
# Dependencies only: this layer is reused until Cargo.lock changes.
RUN cargo chef cook --release --recipe-path recipe.json
COPY . .
# The image's files go to /out, laid out as scripts/build-image-local lays
# them out: backgammond, plugins/, and an empty folder for mount points.
RUN cargo build --release --locked -p bg-server --bin backgammond \
 && cargo run --locked --quiet -p xtask -- plugins --release \
 && mkdir -p /out/plugins /out/empty \
 && cp target/release/backgammond /out/ \
 && cp target/plugins/*.so target/plugins/*.bgnet /out/plugins/

FROM ${ARTIFACTS} AS staged

FROM ${RUNTIME_BASE} AS runtime
COPY --from=staged /out/backgammond /usr/local/bin/backgammond
COPY --from=staged /out/plugins/ /opt/backgammon/plugins/
COPY --from=staged /out/empty/ /opt/backgammon/extra-plugins/
COPY --from=staged --chown=65532:65532 /out/empty/ /var/lib/backgammon/
ENV BACKGAMMON_LISTEN=0.0.0.0:50051 \
    BACKGAMMON_PLUGIN_DIR=/opt/backgammon/plugins:/opt/backgammon/extra-plugins \
    BACKGAMMON_DATA_DIR=/var/lib/backgammon \
    BACKGAMMON_SHUTDOWN_GRACE_SECONDS=10
VOLUME ["/var/lib/backgammon"]
USER 65532:65532
EXPOSE 50051
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=6s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/backgammond", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/backgammond"]
