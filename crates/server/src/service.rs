//! The `backgammon.v1.GameService` RPCs: each reads its request, checks
//! it, and hands a command to [`Games`].

use std::pin::Pin;
use std::sync::Arc;

use bg_api::v1 as pb;
use bg_api::v1::game_service_server::GameService;
use bg_engine::game::Command;
use bg_store::GameStore;
use futures_util::StreamExt as _;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use tracing::Instrument;

use crate::convert;
use crate::error::{ApiError, Reason};
use crate::fields::{Fields, GameField};
use crate::fleet::Access;
use crate::games::{Action, Games, check_request_id, fingerprint, game_id_of};
use crate::rate_limit::{Limiter, Rate};

pub struct Service<S> {
    games: Arc<Games<S>>,
    /// Games created per caller (None: no limit).
    new_games: Option<Limiter>,
    /// The operator's token (None: none lists by token).
    operator_token: Option<String>,
}

impl<S> Service<S> {
    pub fn new(games: Arc<Games<S>>, new_games: Option<Rate>) -> Self {
        Service {
            games,
            new_games: new_games.map(Limiter::new),
            operator_token: None,
        }
    }

    /// Refuses a caller creating games faster than the operator allows:
    /// RESOURCE_EXHAUSTED, `RATE_LIMITED`, with the milliseconds to wait.
    fn check_new_game_rate<T>(
        &self,
        request: &Request<T>,
        certified: Option<&str>,
    ) -> Result<(), ApiError> {
        let Some(limiter) = &self.new_games else {
            return Ok(());
        };
        // The certificate names the caller; without one, its address
        // does (behind a proxy, every caller shares the proxy's).
        let caller = match (certified, request.remote_addr()) {
            (Some(certified), _) => certified.to_string(),
            (None, Some(address)) => address.ip().to_string(),
            (None, None) => "unknown".to_string(),
        };
        limiter.take(&caller).map_err(|wait| {
            crate::metrics::limited("new_games_rate");
            let ms = wait.as_millis().max(1);
            ApiError::new(Reason::RateLimited,
                format!("this caller creates games faster than the server allows (--new-games-per-second): retry in {ms} ms"),
            )
            .with("retry_after_ms", ms)
        })
    }
}

impl<S: GameStore> Service<S> {
    /// Who lists and follows matches: the operator by its token, a backend
    /// by its client certificate (docs/fleet.md).
    fn fleet_access<T>(&self, request: &Request<T>) -> Result<Access, ApiError> {
        let token = bearer(request)?;
        Access::of(
            token.as_deref(),
            certified_caller(request).as_deref(),
            self.operator_token.as_deref(),
        )
    }

    /// The operator's token, which lists and follows every match.
    pub fn with_operator_token(mut self, token: Option<String>) -> Service<S> {
        self.operator_token = token;
        self
    }
}

/// The seat token of a request: `authorization: Bearer <token>`, the
/// scheme in any case (RFC 7235). None without one, or with an empty one.
/// Two `authorization` headers are refused: which one a proxy or the
/// server would take is not something to leave to chance.
fn bearer<T>(request: &Request<T>) -> Result<Option<String>, ApiError> {
    let mut values = request.metadata().get_all("authorization").iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(ApiError::new(
            Reason::TokenAmbiguous,
            "the request carries more than one `authorization` header: send one, `Bearer <token>`",
        ));
    }
    let Ok(value) = value.to_str() else {
        return Ok(None);
    };
    let Some((scheme, token)) = value.trim().split_once(|c: char| c.is_ascii_whitespace()) else {
        return Ok(None);
    };
    let token = token.trim();
    Ok((scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_string()))
}

/// Who the caller is, when it showed a client certificate (TLS with
/// `--tls-client-ca`): the first 128 bits of the SHA-256 of its
/// certificate, in hex. None without one.
fn certified_caller<T>(request: &Request<T>) -> Option<String> {
    use sha2::{Digest, Sha256};
    let certificates = request.peer_certs()?;
    let leaf = certificates.first()?;
    let digest = Sha256::digest(leaf.as_ref());
    Some(format!("cert:{}", hex::encode(&digest[..16])))
}

impl<S: GameStore> Service<S> {
    /// Runs an action. The request is judged (its command, its version)
    /// only once its token has shown whose it is: a caller without the
    /// seat's token learns nothing about the game or the request.
    async fn act<M: ActionRequest>(
        &self,
        method: &str,
        request: &Request<M>,
        command: Result<Command, ApiError>,
    ) -> Result<Response<pb::Game>, Status> {
        let (game_id, expected_version, request_id) = request.get_ref().target();
        // One game, however its id is spelled: the request is recognised
        // (on a retry) by its canonical form.
        let game_id = game_id_of(game_id)?;
        check_request_id(request_id)?;
        let fields = Fields::from_mask(request.get_ref().read_mask())?;
        let canonical = request.get_ref().for_game(&game_id);
        let action = Action {
            game_id: game_id.clone(),
            token: bearer(request)?,
            expected_version,
            request_id: request_id.to_string(),
            fingerprint: fingerprint(method, &canonical),
            command,
            dice_seed: request.get_ref().dice_seed().to_string(),
            fields,
        };
        let span = tracing::info_span!("action", %game_id, method, request_id);
        Ok(Response::new(
            self.games.act(action).instrument(span).await?,
        ))
    }
}

/// The fields every action request carries.
trait ActionRequest: prost::Message + Sized {
    /// (game id, expected version, request id).
    fn target(&self) -> (&str, u64, &str);
    /// The same request, for the game spelled `game_id`, without its
    /// read mask: what a request id names.
    fn for_game(&self, game_id: &str) -> Self;
    /// The Game fields to answer with.
    fn read_mask(&self) -> Option<&prost_types::FieldMask>;
    /// The seat's seed for the verifiable dice it carries (Roll and Move).
    fn dice_seed(&self) -> &str;
}

macro_rules! action_requests {
    ($($message:ty => |$r:ident| $seed:expr),*) => {$(
        impl ActionRequest for $message {
            fn target(&self) -> (&str, u64, &str) {
                (&self.game_id, self.expected_version, &self.request_id)
            }
            fn for_game(&self, game_id: &str) -> Self {
                Self { game_id: game_id.to_string(), read_mask: None, ..self.clone() }
            }
            fn read_mask(&self) -> Option<&prost_types::FieldMask> {
                self.read_mask.as_ref()
            }
            fn dice_seed(&self) -> &str {
                let $r = self;
                $seed
            }
        }
    )*};
}

action_requests!(
    pb::RollRequest => |r| &r.dice_seed,
    pb::MoveRequest => |r| &r.dice_seed,
    pb::DoubleRequest => |_r| "",
    pb::ResignRequest => |_r| "",
    pb::DecideRequest => |_r| "",
    pb::AbandonRequest => |_r| ""
);

type WatchStream = Pin<Box<dyn Stream<Item = Result<pb::GameUpdate, Status>> + Send>>;
type MatchStream = Pin<Box<dyn Stream<Item = Result<pb::MatchEvent, Status>> + Send>>;

#[tonic::async_trait]
impl<S: GameStore> GameService for Service<S> {
    async fn list_variants(
        &self,
        _: Request<pb::ListVariantsRequest>,
    ) -> Result<Response<pb::ListVariantsResponse>, Status> {
        let variants = self.games.variants().await;
        Ok(Response::new(pb::ListVariantsResponse { variants }))
    }

    async fn new_game(
        &self,
        request: Request<pb::NewGameRequest>,
    ) -> Result<Response<pb::NewGameResponse>, Status> {
        let caller = certified_caller(&request);
        self.check_new_game_rate(&request, caller.as_deref())?;
        Ok(Response::new(
            self.games
                .new_game(request.get_ref(), caller.as_deref())
                .await?,
        ))
    }

    async fn get_game(
        &self,
        request: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        let r = request.get_ref();
        let fields = Fields::from_mask(r.read_mask.as_ref())?;
        Ok(Response::new(self.games.get(&r.game_id, &fields).await?))
    }

    async fn legal_plays(
        &self,
        request: Request<pb::LegalPlaysRequest>,
    ) -> Result<Response<pb::LegalPlaysResponse>, Status> {
        let fields = Fields::only(&[
            GameField::Version,
            GameField::Phase,
            GameField::Turn,
            GameField::Dice,
            GameField::LegalPlays,
        ]);
        let game = self.games.get(&request.get_ref().game_id, &fields).await?;
        Ok(Response::new(pb::LegalPlaysResponse {
            version: game.version,
            seat: if game.phase == pb::Phase::Move as i32 {
                game.turn
            } else {
                0
            },
            dice: game.dice,
            plays: game.legal_plays,
        }))
    }

    async fn roll(&self, request: Request<pb::RollRequest>) -> Result<Response<pb::Game>, Status> {
        self.act("Roll", &request, Ok(Command::Roll)).await
    }

    async fn r#move(
        &self,
        request: Request<pb::MoveRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        let r = request.get_ref();
        let command =
            convert::from_api::play(&r.moves, &r.notation).map(|play| Command::Move { play });
        self.act("Move", &request, command).await
    }

    async fn double(
        &self,
        request: Request<pb::DoubleRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        let r = request.get_ref();
        let command = match pb::DoubleAction::try_from(r.action) {
            Ok(pb::DoubleAction::Offer) => Ok(Command::Double),
            Ok(pb::DoubleAction::Take) => Ok(Command::Take),
            Ok(pb::DoubleAction::Drop) => Ok(Command::Drop),
            Ok(pb::DoubleAction::Beaver) => Ok(Command::Beaver),
            _ => Err(ApiError::invalid(
                "action",
                "give OFFER, TAKE, DROP or BEAVER",
            )),
        };
        self.act("Double", &request, command).await
    }

    async fn resign(
        &self,
        request: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        let r = request.get_ref();
        let command = match pb::ResignAction::try_from(r.action) {
            Ok(pb::ResignAction::Resign) => Ok(Command::Resign {
                level: (r.level != 0).then_some(r.level),
            }),
            Ok(pb::ResignAction::Accept) => Ok(Command::AcceptResignation),
            Ok(pb::ResignAction::Decline) => Ok(Command::DeclineResignation),
            _ => Err(ApiError::invalid(
                "action",
                "give RESIGN, ACCEPT or DECLINE",
            )),
        };
        self.act("Resign", &request, command).await
    }

    async fn decide(
        &self,
        request: Request<pb::DecideRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        let r = request.get_ref();
        let command = Ok(Command::Decide {
            choice: r.choice.clone(),
        });
        self.act("Decide", &request, command).await
    }

    async fn abandon(
        &self,
        request: Request<pb::AbandonRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        self.act("Abandon", &request, Ok(Command::Abandon)).await
    }

    type WatchGameStream = WatchStream;

    async fn hint(
        &self,
        request: Request<pb::HintRequest>,
    ) -> Result<Response<pb::HintResponse>, Status> {
        let token = if request.get_ref().game_id.is_empty() {
            None
        } else {
            bearer(&request)?
        };
        Ok(Response::new(
            self.games.hint(request.get_ref(), token.as_deref()).await?,
        ))
    }

    async fn analyze_match(
        &self,
        request: Request<pb::AnalyzeMatchRequest>,
    ) -> Result<Response<pb::AnalyzeMatchResponse>, Status> {
        // A finished match needs no token; one in progress does.
        let token = bearer(&request)?;
        Ok(Response::new(
            self.games
                .analyze_match(request.get_ref(), token.as_deref())
                .await?,
        ))
    }

    async fn export_match(
        &self,
        request: Request<pb::ExportMatchRequest>,
    ) -> Result<Response<pb::ExportMatchResponse>, Status> {
        Ok(Response::new(self.games.export(request.get_ref()).await?))
    }

    async fn watch_game(
        &self,
        request: Request<pb::WatchGameRequest>,
    ) -> Result<Response<WatchStream>, Status> {
        let r = request.get_ref();
        let fields = Fields::from_mask(r.read_mask.as_ref())?;
        let updates = self.games.watch(&r.game_id, r.from_version, fields).await?;
        Ok(Response::new(Box::pin(ReceiverStream::new(updates))))
    }

    async fn list_matches(
        &self,
        request: Request<pb::ListMatchesRequest>,
    ) -> Result<Response<pb::ListMatchesResponse>, Status> {
        let access = self.fleet_access(&request)?;
        Ok(Response::new(
            self.games.list_matches(&access, request.get_ref()).await?,
        ))
    }

    type WatchMatchesStream = MatchStream;

    async fn watch_matches(
        &self,
        request: Request<pb::WatchMatchesRequest>,
    ) -> Result<Response<MatchStream>, Status> {
        let access = self.fleet_access(&request)?;
        let reads = self.games.watch_matches(access, request.get_ref()).await?;
        // A read's events are ready together, so tonic writes them as one.
        let events = ReceiverStream::new(reads).flat_map(|read| {
            futures_util::stream::iter(match read {
                Ok(events) => events.into_iter().map(Ok).collect(),
                Err(status) => vec![Err(status)],
            })
        });
        Ok(Response::new(Box::pin(events)))
    }

    async fn list_webhook_deliveries(
        &self,
        request: Request<pb::ListWebhookDeliveriesRequest>,
    ) -> Result<Response<pb::ListWebhookDeliveriesResponse>, Status> {
        let access = self.fleet_access(&request)?;
        let answer = self
            .games
            .list_webhook_deliveries(access, request.get_ref())
            .await?;
        Ok(Response::new(answer))
    }
}
