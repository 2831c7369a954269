//! The server's port as the fuzz targets (crates/fuzz-bodies) drive it,
//! without a socket: every route it answers (the API over gRPC and
//! gRPC-Web, reflection, health, the boards and the web client's files)
//! over a SQLite store in a folder the caller gives. Never used by the
//! service.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
pub use axum::body::Body;
pub use axum::http;
use bg_api::v1 as pb;
use bg_plugin_host::PluginHost;
use bg_store::{Durability, SqliteStore};
use tokio::sync::watch;
use tower::ServiceExt as _;

use crate::games::Games;

/// The operator token the port takes (ListMatches, WatchMatches).
pub const OPERATOR_TOKEN: &str = "fuzz-operator-token-0123456789";

/// How long an answer's body is read: a stream (WatchGame, WatchMatches)
/// never ends by itself.
const READ_FOR: Duration = Duration::from_millis(50);

/// The routes over a store, on a runtime of their own.
pub struct Port {
    runtime: tokio::runtime::Runtime,
    /// The routes under the layer that names tonic's own errors, as
    /// `serve` stacks them.
    router: crate::error::ErrorInfoService<axum::Router>,
    /// A game of every variant loaded, created when the port opened.
    pub games: Vec<String>,
    _stop: watch::Sender<bool>,
}

/// What the port answered a request.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// The gRPC status, from the headers or (gRPC-Web) the body's
    /// trailer frame; None for a plain HTTP answer.
    pub grpc_status: Option<i32>,
    /// The body as text, as far as it was read.
    pub body: String,
}

impl Port {
    /// The port over a new store in `dir`, with the plugins in
    /// `plugin_dirs` (none: every NewGame names an unknown variant).
    pub fn open(dir: &Path, plugin_dirs: Vec<PathBuf>) -> anyhow::Result<Port> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting a runtime")?;
        let (stop, stopped) = watch::channel(false);
        let (router, games) = runtime.block_on(async {
            let store = SqliteStore::open(&dir.join("games.db"), Durability::Normal).await?;
            let plugins = Arc::new(PluginHost::with_dirs(plugin_dirs));
            plugins.scan().context("loading plugins")?;
            let games = Arc::new(Games::new(store, [7; 32], plugins.clone(), stopped));
            let mut ids = Vec::new();
            for plugin in plugins.plugins() {
                let request = pb::NewGameRequest {
                    variant: plugin.name().to_string(),
                    ..Default::default()
                };
                let created = games
                    .new_game(&request, None)
                    .await
                    .map_err(|e| anyhow::anyhow!("a {} game: {}", plugin.name(), e.message))?;
                if let Some(game) = created.game {
                    ids.push(game.game_id);
                }
            }
            let router = crate::routes(
                tonic::service::Routes::default(),
                games,
                None,
                Some(OPERATOR_TOKEN.to_string()),
                true,
            )?;
            let router = tower::Layer::layer(&crate::error::ErrorInfoLayer, router);
            anyhow::Ok((router, ids))
        })?;
        Ok(Port {
            runtime,
            router,
            games,
            _stop: stop,
        })
    }

    /// Sends `request` and reads the answer (a stream's for a moment).
    pub fn send(&self, request: http::Request<Body>) -> Answer {
        self.runtime.block_on(async {
            let answer = match self.router.clone().oneshot(request).await {
                Ok(answer) => answer,
                Err(never) => match never {},
            };
            let status = answer.status().as_u16();
            let mut grpc_status = grpc_status(answer.headers());
            let mut body = Vec::new();
            let mut stream = answer.into_body().into_data_stream();
            let reading = async {
                use futures_util::StreamExt as _;
                while let Some(Ok(chunk)) = stream.next().await {
                    body.extend_from_slice(&chunk);
                    if body.len() > 1 << 20 {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(READ_FOR, reading).await;
            let body = String::from_utf8_lossy(&body).into_owned();
            if grpc_status.is_none() {
                grpc_status = trailer_status(&body);
            }
            Answer {
                status,
                grpc_status,
                body,
            }
        })
    }
}

fn grpc_status(headers: &http::HeaderMap) -> Option<i32> {
    headers.get("grpc-status")?.to_str().ok()?.parse().ok()
}

/// gRPC-Web's trailers come last in the body, as `grpc-status:N` lines.
fn trailer_status(body: &str) -> Option<i32> {
    let at = body.rfind("grpc-status:")?;
    body[at + "grpc-status:".len()..]
        .split(['\r', '\n'])
        .next()?
        .trim()
        .parse()
        .ok()
}
