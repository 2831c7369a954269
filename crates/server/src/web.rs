//! What the server serves to browsers as plain HTTP, on the gRPC port
//! beside the API (HTTP/1.1 and HTTP/2 are both accepted there):
//! - a game's board as SVG, `GET /games/{id}/board.svg` (`?version=N` for
//!   an earlier version). Like GetGame, it needs only the game id. Errors
//!   are short text: 400 for a version that is not the game's, 404 for no
//!   such game, 503 when storage is away; never a stack trace.
//! - the web client (`/`, `/app.js`, `/app.css`): the files `web/` builds,
//!   committed in `web/dist` and embedded here, so that serving it needs
//!   no Node. It calls the API over gRPC-Web on this same origin.
//!   `backgammond --no-web` leaves it out (the boards stay).

use std::sync::Arc;

use axum::extract::{Path, Query};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use bg_store::GameStore;
use serde::Deserialize;

use crate::error::{ApiError, Reason};
use crate::games::Games;

/// The web client's files, as built (web/dist).
const INDEX_HTML: &str = include_str!("../../../web/dist/index.html");
const APP_JS: &str = include_str!("../../../web/dist/app.js");
const APP_CSS: &str = include_str!("../../../web/dist/app.css");

/// The routes, added to the gRPC services' router (the web client's
/// files when `client`).
pub(crate) fn routes<S: GameStore>(games: Arc<Games<S>>, client: bool) -> axum::Router {
    let router = boards(games);
    if !client {
        return router;
    }
    let file = |body: &'static str, kind: &'static str| {
        axum::routing::get(move || async move {
            (
                [
                    (header::CONTENT_TYPE, kind),
                    // Not named by content: a browser asks again each time.
                    (header::CACHE_CONTROL, "no-cache"),
                    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                ],
                body,
            )
        })
    };
    router
        .route("/", file(INDEX_HTML, "text/html; charset=utf-8"))
        .route("/index.html", file(INDEX_HTML, "text/html; charset=utf-8"))
        .route("/app.js", file(APP_JS, "text/javascript; charset=utf-8"))
        .route("/app.css", file(APP_CSS, "text/css; charset=utf-8"))
        // No icon: said plainly, rather than left to the API's router.
        .route(
            "/favicon.ico",
            axum::routing::get(|| async { StatusCode::NO_CONTENT }),
        )
}

fn boards<S: GameStore>(games: Arc<Games<S>>) -> axum::Router {
    axum::Router::new().route(
        "/games/{id}/board.svg",
        axum::routing::get(move |Path(id): Path<String>, Query(q): Query<BoardQuery>| {
            let games = games.clone();
            async move { board_svg(&games, &id, q).await }
        }),
    )
}

#[derive(Deserialize)]
struct BoardQuery {
    version: Option<String>,
}

async fn board_svg<S: GameStore>(games: &Games<S>, id: &str, q: BoardQuery) -> Response {
    let version = match q.version.as_deref().map(str::parse::<u64>) {
        None => None,
        Some(Ok(v)) => Some(v),
        Some(Err(_)) => return text(StatusCode::BAD_REQUEST, "version: a whole number from 1"),
    };
    let game = match games.game_at(id, version).await {
        Ok(game) => game,
        Err(e) => return failure(&e),
    };
    let variant = games.variant(&game.variant).await.unwrap_or_default();
    let svg = bg_board_svg::render(&game, &variant);
    // A version never changes: its picture may be kept for good. The
    // game as it stands changes with every action.
    let cache = if version.is_some() {
        "public, max-age=31536000, immutable"
    } else {
        "no-store"
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "image/svg+xml; charset=utf-8"),
            (header::CACHE_CONTROL, cache),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        svg,
    )
        .into_response()
}

/// An API error as a short text answer.
fn failure(e: &ApiError) -> Response {
    // An id that is not one names no game either.
    let bad_id = e.metadata.get("field").is_some_and(|f| f == "game_id");
    let status = match e.reason {
        Reason::GameNotFound => StatusCode::NOT_FOUND,
        _ if bad_id => StatusCode::NOT_FOUND,
        _ if e.code == tonic::Code::InvalidArgument => StatusCode::BAD_REQUEST,
        _ if e.code == tonic::Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let message = match status {
        StatusCode::NOT_FOUND => "no such game".to_string(),
        StatusCode::BAD_REQUEST => e.message.clone(),
        StatusCode::SERVICE_UNAVAILABLE => "the service is unavailable; try again".to_string(),
        _ => format!("this board cannot be drawn ({})", e.reason.as_str()),
    };
    text(status, &message)
}

fn text(status: StatusCode, message: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{message}\n"),
    )
        .into_response()
}
