//! The games: loading, acting, storing, and telling watchers.
//!
//! Commands on one game are serialised by that game's lock, held from
//! reading the state to storing the result; the store's compare-and-set
//! on the version keeps several server processes (replicas) correct too.
//! A command is answered only after its result is durable.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bg_api::v1 as pb;
use bg_engine::game::{Command, DiceSource, Event, GameError, Match, Phase, Rules};
use bg_engine::{LegalPlay, Seat};
use bg_plugin_host::{PluginHost, VariantRules};
use bg_store::{EventRecord, GameRecord, GameStore, NEW_GAME_SCOPE, RequestRecord, StoreError};
use bg_variant_api::Capabilities;
use prost::Message;
use rand::Rng;
use sha2::{Digest, Sha256};
use tokio::sync::{broadcast, watch};
use tonic::Code;

use crate::convert::{self, GameMeta};
use crate::error::ApiError;

/// Dice from the thread's CSPRNG (ChaCha, seeded by the OS).
struct ServerDice(rand::rngs::ThreadRng);

impl DiceSource for ServerDice {
    fn die(&mut self) -> u8 {
        self.0.random_range(1..=6)
    }
}

/// A game in memory, as stored.
struct Live {
    record: GameRecord,
    game: Match,
    rules: VariantRules,
    /// The events of the action that made this version.
    last_events: Vec<pb::GameEvent>,
    /// A write of this game failed, or lost to another writer: the store
    /// may hold another version. Read it again before using it.
    stale: bool,
}

/// One game's lock and its watchers' channel.
struct Slot {
    live: tokio::sync::Mutex<Option<Live>>,
    updates: broadcast::Sender<Arc<pb::GameUpdate>>,
    /// When the game was last used (for evicting idle games).
    last_used: Mutex<Instant>,
}

/// Updates a watcher may fall behind by before it must resume.
const WATCH_BUFFER: usize = 32;

/// Who is asking for an action, and how to recognise a retry.
pub struct Action {
    pub game_id: String,
    pub token: Option<String>,
    pub expected_version: u64,
    pub request_id: String,
    /// A digest of the whole request: a retry must match it.
    pub fingerprint: Vec<u8>,
    /// The command, or why the request does not make one (told only to
    /// the seat's own token holder).
    pub command: Result<Command, ApiError>,
}

pub struct Games<S> {
    store: S,
    /// The key seat tokens are derived with (see [`seat_token`]).
    secret: [u8; 32],
    plugins: Arc<PluginHost>,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    shutdown: watch::Receiver<bool>,
}

/// SHA-256 of a request's method and bytes.
pub fn fingerprint(method: &str, message: &impl Message) -> Vec<u8> {
    let mut hash = Sha256::new();
    hash.update(method.as_bytes());
    hash.update(message.encode_to_vec());
    hash.finalize().to_vec()
}

fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// A seat's token: derived from the server's secret, the game and the
/// seat, so it is never stored and a retried NewGame can be answered
/// again without keeping tokens anywhere.
fn seat_token(secret: &[u8; 32], game_id: &str, seat: Seat) -> String {
    use hmac::{KeyInit, Mac};
    let mut mac = hmac::Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(b"backgammon seat token v1\0");
    mac.update(game_id.as_bytes());
    mac.update(&[0, seat as u8]);
    URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

/// Equal in time independent of where the inputs differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The shortest NewGame request id accepted (a UUID has 36 characters).
pub const MIN_NEW_GAME_REQUEST_ID: usize = 16;

/// Every action names the version it acted on: 0 is no version.
fn require_version(expected_version: u64) -> Result<(), ApiError> {
    if expected_version == 0 {
        return Err(ApiError::invalid(
            "expected_version",
            "give the version of the game you acted on (Game.version)",
        ));
    }
    Ok(())
}

/// A game id in its one stored spelling: a UUID, lower case, with hyphens.
/// Every spelling of a UUID is taken (upper case, without hyphens, in
/// braces, as `urn:uuid:`) and means the same game.
pub fn game_id_of(game_id: &str) -> Result<String, ApiError> {
    uuid::Uuid::try_parse(game_id)
        .map(|id| id.hyphenated().to_string())
        .map_err(|_| ApiError::invalid("game_id", format!("{game_id:?} is not a game id (a UUID)")))
}

impl Live {
    fn meta<'a>(&'a self, options: &'a BTreeMap<String, String>) -> GameMeta<'a> {
        GameMeta {
            game_id: &self.record.game_id,
            version: self.record.version,
            variant: &self.record.variant,
            variant_version: &self.record.variant_version,
            options,
            standard_board: self
                .rules
                .plugin
                .capabilities()
                .contains(Capabilities::STANDARD_BOARD),
            last_events: &self.last_events,
        }
    }

    fn legal_plays(&self) -> Result<Vec<LegalPlay>, ApiError> {
        match (self.game.phase, self.game.dice) {
            (Phase::Move, Some(dice)) => self
                .rules
                .legal_plays(&self.game.variant_state, self.game.turn, dice)
                .map_err(|e| GameError::Rules(e).into()),
            _ => Ok(Vec::new()),
        }
    }

    fn snapshot(&self) -> Result<pb::Game, ApiError> {
        let board = self
            .rules
            .plugin
            .board(&self.game.variant_state)
            .map_err(|e| ApiError::from(GameError::Rules(e.into())))?;
        let legal = self.legal_plays()?;
        Ok(convert::game(
            &self.meta(&self.rules.options),
            &self.game,
            &board,
            &legal,
        ))
    }

    /// The seat a token belongs to.
    fn seat(&self, token: Option<&str>) -> Result<Seat, ApiError> {
        let token = token.ok_or_else(|| {
            ApiError::new(
                Code::Unauthenticated,
                "TOKEN_MISSING",
                "actions need a seat token: metadata `authorization: Bearer <token>`",
            )
        })?;
        let hash = token_hash(token);
        for seat in Seat::BOTH {
            if same(&hash, &self.record.token_hashes[seat.index()]) {
                return Ok(seat);
            }
        }
        Err(ApiError::new(
            Code::PermissionDenied,
            "TOKEN_INVALID",
            "this token belongs to no seat of this game",
        ))
    }
}

fn event_records(version: u64, events: &[Event]) -> Vec<EventRecord> {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (kind, seat, detail) = convert::event(e);
            EventRecord {
                version,
                index: i as u32,
                kind,
                seat: seat.map(|s| s as u8),
                detail,
            }
        })
        .collect()
}

/// Stored events as watch updates, one per version up to `current`; the
/// last carries the game as it stands.
fn updates_from(past: &[EventRecord], current: u64, game: pb::Game) -> Vec<pb::GameUpdate> {
    let mut updates: Vec<pb::GameUpdate> = Vec::new();
    for record in past.iter().filter(|e| e.version <= current) {
        match updates.last_mut() {
            Some(update) if update.version == record.version => update
                .events
                .extend(api_events(std::slice::from_ref(record))),
            _ => updates.push(pb::GameUpdate {
                version: record.version,
                events: api_events(std::slice::from_ref(record)),
                game: None,
            }),
        }
    }
    match updates.last_mut() {
        Some(last) if last.version == current => last.game = Some(game),
        _ => updates.push(pb::GameUpdate {
            version: current,
            events: Vec::new(),
            game: Some(game),
        }),
    }
    updates
}

fn api_events(records: &[EventRecord]) -> Vec<pb::GameEvent> {
    records
        .iter()
        .map(|e| pb::GameEvent {
            kind: e.kind.clone(),
            seat: convert::seat_or_none(e.seat.and_then(Seat::from_index)),
            detail_json: e.detail.clone(),
        })
        .collect()
}

impl<S: GameStore> Games<S> {
    pub fn new(
        store: S,
        secret: [u8; 32],
        plugins: Arc<PluginHost>,
        shutdown: watch::Receiver<bool>,
    ) -> Games<S> {
        Games {
            store,
            secret,
            plugins,
            slots: Mutex::new(HashMap::new()),
            shutdown,
        }
    }

    pub fn plugins(&self) -> &PluginHost {
        &self.plugins
    }

    fn slot(&self, game_id: &str) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slot = slots
            .entry(game_id.to_string())
            .or_insert_with(|| {
                Arc::new(Slot {
                    live: tokio::sync::Mutex::new(None),
                    updates: broadcast::channel(WATCH_BUFFER).0,
                    last_used: Mutex::new(Instant::now()),
                })
            })
            .clone();
        *slot.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        slot
    }

    /// Forgets games nobody used for `idle`: no call in flight, no
    /// watcher. They stay in the store and are read again when asked for,
    /// so an idle game costs no memory.
    pub fn evict_idle(&self, idle: Duration) -> usize {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let before = slots.len();
        slots.retain(|_, slot| {
            let in_use = Arc::strong_count(slot) > 1 || slot.updates.receiver_count() > 0;
            let last = *slot.last_used.lock().unwrap_or_else(|e| e.into_inner());
            in_use || last.elapsed() < idle
        });
        before - slots.len()
    }

    /// Drops the slot a call for an unknown game made, unless another call
    /// holds it too (then the idle eviction does): asking for ids that do
    /// not exist must not fill the memory.
    fn forget_unknown(&self, game_id: &str) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        // Held by the map and by the one call that is failing.
        if slots
            .get(game_id)
            .is_some_and(|slot| Arc::strong_count(slot) <= 2 && slot.updates.receiver_count() == 0)
        {
            slots.remove(game_id);
        }
    }

    /// Games held in memory.
    pub fn live_games(&self) -> usize {
        self.slots.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Reads a stored game into memory.
    async fn load(&self, game_id: &str) -> Result<Live, ApiError> {
        let Some(record) = self.store.load(game_id).await.map_err(ApiError::store)? else {
            self.forget_unknown(game_id);
            return Err(ApiError::not_found(game_id));
        };
        let plugin = self.plugins.get(&record.variant).ok_or_else(|| {
            ApiError::new(
                Code::FailedPrecondition,
                "VARIANT_NOT_LOADED",
                format!(
                    "this game's variant `{}` is not loaded on this server",
                    record.variant
                ),
            )
        })?;
        if plugin.version() != record.variant_version {
            tracing::warn!(
                game_id,
                variant = %record.variant,
                started_with = %record.variant_version,
                loaded = plugin.version(),
                "game continues on another version of its variant"
            );
        }
        let options: BTreeMap<String, String> =
            serde_json::from_str(&record.options).map_err(corrupt)?;
        let game: Match = serde_json::from_str(&record.state).map_err(corrupt)?;
        game.check()
            .map_err(|e| ApiError::data_loss(format!("game {game_id}: {e}")))?;
        let mut rules = VariantRules::new(plugin, options);
        if let Some(start) = &record.start_board {
            rules.start = Some(serde_json::from_str(start).map_err(corrupt)?);
        }
        let mut last_events = self
            .store
            .events_after(game_id, record.version - 1)
            .await
            .map_err(ApiError::store)?;
        last_events.retain(|e| e.version == record.version);
        let live = Live {
            rules,
            record,
            game,
            last_events: api_events(&last_events),
            stale: false,
        };
        // A state that reads as JSON may still be one its variant refuses
        // (a die of 9, a board cut short): damaged data, not a plugin bug.
        if let Err(e) = live.snapshot()
            && e.reason == "INVALID_INPUT"
        {
            return Err(ApiError::data_loss(format!(
                "game {game_id}: its variant refuses the stored state"
            )));
        }
        Ok(live)
    }

    pub async fn new_game(
        &self,
        request: &pb::NewGameRequest,
    ) -> Result<pb::NewGameResponse, ApiError> {
        // A retried NewGame answers with both seat tokens, so its id is as
        // secret as they are: refuse ids short enough to guess (a length
        // check; a UUID4 is what to send), before any replay.
        if !request.request_id.is_empty() && request.request_id.len() < MIN_NEW_GAME_REQUEST_ID {
            return Err(ApiError::invalid(
                "request_id",
                format!(
                    "a NewGame request_id must be a random id of at least {MIN_NEW_GAME_REQUEST_ID} characters (a UUID4): a retry answers with the seat tokens"
                ),
            ));
        }
        // The options map encodes in no fixed order: digest it sorted.
        let mut canonical = request.clone();
        canonical.options.clear();
        let mut fingerprint = fingerprint("NewGame", &canonical);
        let sorted: BTreeMap<&String, &String> = request.options.iter().collect();
        fingerprint.extend(Sha256::digest(format!("{sorted:?}").as_bytes()));
        if !request.request_id.is_empty()
            && let Some(previous) = self
                .store
                .request(NEW_GAME_SCOPE, &request.request_id)
                .await
                .map_err(ApiError::store)?
        {
            return self.replay_new_game(&previous, &fingerprint);
        }
        let plugin = self.plugins.get(&request.variant).ok_or_else(|| {
            let known: Vec<String> = self
                .plugins
                .plugins()
                .iter()
                .map(|p| p.name().to_string())
                .collect();
            ApiError::invalid(
                "variant",
                format!(
                    "unknown variant {:?} (loaded: {})",
                    request.variant,
                    known.join(", ")
                ),
            )
        })?;
        let settings = convert::settings(request.settings.as_ref())?;
        let options: BTreeMap<String, String> = request
            .options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut rules = VariantRules::new(plugin.clone(), options.clone());
        rules.start = request
            .start_board
            .as_ref()
            .map(convert::start_board)
            .transpose()?;
        let (game, events) =
            Match::new(settings, &rules, &mut ServerDice(rand::rng())).map_err(|e| {
                // A position the variant refuses is the caller's mistake,
                // not the plugin's fault.
                if let GameError::Rules(r) = &e
                    && rules.start.is_some()
                    && (r.reason == "INVALID_INPUT" || r.reason == "UNSUPPORTED")
                {
                    return ApiError::invalid(
                        "start_board",
                        format!("the variant refuses this start position: {}", r.message),
                    );
                }
                let api = ApiError::from(e);
                if api.code == Code::InvalidArgument {
                    ApiError {
                        reason: "INVALID_OPTION",
                        ..api
                    }
                    .with("field", "options")
                } else {
                    api
                }
            })?;
        // Time-ordered (UUID version 7): games created together, the ones
        // being played, share index pages, so a group commit writes fewer.
        let game_id = uuid::Uuid::now_v7().to_string();
        let tokens = [
            seat_token(&self.secret, &game_id, Seat::White),
            seat_token(&self.secret, &game_id, Seat::Black),
        ];
        let record = GameRecord {
            game_id,
            variant: plugin.name().to_string(),
            variant_version: plugin.version().to_string(),
            options: serde_json::to_string(&options).map_err(unserialisable)?,
            version: 1,
            state: serde_json::to_string(&game).map_err(unserialisable)?,
            token_hashes: [token_hash(&tokens[0]), token_hash(&tokens[1])],
            start_board: rules
                .start
                .as_ref()
                .map(serde_json::to_string)
                .transpose()
                .map_err(unserialisable)?,
        };
        let records = event_records(1, &events);
        let live = Live {
            record,
            game,
            rules,
            last_events: api_events(&records),
            stale: false,
        };
        let response = pb::NewGameResponse {
            game: Some(live.snapshot()?),
            white_token: tokens[0].clone(),
            black_token: tokens[1].clone(),
        };
        let request_record = (!request.request_id.is_empty()).then(|| RequestRecord {
            scope: NEW_GAME_SCOPE.to_string(),
            request_id: request.request_id.clone(),
            fingerprint,
            // Without the tokens: a retry derives them again.
            response: pb::NewGameResponse {
                white_token: String::new(),
                black_token: String::new(),
                ..response.clone()
            }
            .encode_to_vec(),
        });
        match self
            .store
            .create(&live.record, &records, request_record.as_ref())
            .await
        {
            Ok(()) => {}
            Err(StoreError::Duplicate) if request_record.is_some() => {
                // The same request id won a race: answer as it did.
                let previous = self
                    .store
                    .request(NEW_GAME_SCOPE, &request.request_id)
                    .await
                    .map_err(ApiError::store)?
                    .ok_or_else(|| ApiError::store(StoreError::Duplicate))?;
                return self
                    .replay_new_game(&previous, &request_record.expect("checked").fingerprint);
            }
            Err(e) => return Err(ApiError::store(e)),
        }
        tracing::info!(game_id = %live.record.game_id, variant = %live.record.variant, "game created");
        let slot = self.slot(&live.record.game_id);
        *slot.live.lock().await = Some(live);
        Ok(response)
    }

    /// The first answer to a retried NewGame, with its tokens derived again.
    fn replay_new_game(
        &self,
        previous: &RequestRecord,
        fingerprint: &[u8],
    ) -> Result<pb::NewGameResponse, ApiError> {
        let mut response: pb::NewGameResponse = replay(previous, fingerprint)?;
        let game_id = response
            .game
            .as_ref()
            .map(|g| g.game_id.clone())
            .unwrap_or_default();
        response.white_token = seat_token(&self.secret, &game_id, Seat::White);
        response.black_token = seat_token(&self.secret, &game_id, Seat::Black);
        Ok(response)
    }

    pub async fn get(&self, game_id: &str) -> Result<pb::Game, ApiError> {
        let game_id = &game_id_of(game_id)?;
        let slot = self.slot(game_id);
        let mut guard = slot.live.lock().await;
        self.current(&slot, &mut guard, game_id, 0)
            .await?
            .snapshot()
    }

    /// The game in memory, read from the store first when it is not there,
    /// when its last write failed (the store is the truth), or when the
    /// caller has seen a version beyond it (another server moved it on).
    /// This server's watchers hear of versions they missed.
    async fn current<'a>(
        &self,
        slot: &Slot,
        guard: &'a mut Option<Live>,
        game_id: &str,
        seen: u64,
    ) -> Result<&'a mut Live, ApiError> {
        let cached = match guard.as_ref() {
            None => None,
            Some(live) if live.stale || seen > live.record.version => Some(live.record.version),
            Some(_) => return guard.as_mut().ok_or_else(lost),
        };
        let loaded = self.load(game_id).await?;
        if let Some(cached) = cached {
            self.catch_up_watchers(slot, cached, &loaded).await?;
        }
        Ok(guard.insert(loaded))
    }

    /// Applies an action for the seat its token belongs to.
    ///
    /// The work runs in a task of its own: a caller that goes away (a
    /// deadline, a cancel) cannot stop it between the commit and the
    /// update of the cache and the watchers.
    pub async fn act(self: &Arc<Self>, action: Action) -> Result<pb::Game, ApiError> {
        let games = self.clone();
        tokio::spawn(async move { games.act_to_the_end(action).await })
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "action task failed");
                ApiError::new(Code::Internal, "INTERNAL", "the action failed")
            })?
    }

    async fn act_to_the_end(&self, action: Action) -> Result<pb::Game, ApiError> {
        let game_id = &game_id_of(&action.game_id)?;
        let slot = self.slot(game_id);
        let mut guard = slot.live.lock().await;
        // Tokens never change: any copy of the game can tell the seat, so
        // the request is judged only after its token.
        let seat = self
            .current(&slot, &mut guard, game_id, 0)
            .await?
            .seat(action.token.as_deref())?;
        let command = action.command?;
        require_version(action.expected_version)?;
        let live = self
            .current(&slot, &mut guard, game_id, action.expected_version)
            .await?;
        let scope = format!("{game_id}/{seat}");
        // A request applied before moved the game past the version it
        // expected, so one that expects the current version is not a retry:
        // the store's request log is read first only for the others (a
        // retry, or a stale version). At the current version, an id used
        // before is caught by the commit (the id is already stored), or
        // looked up below when nothing is committed.
        if action.expected_version != live.record.version {
            if let Some(previous) = self.previous_answer(&scope, &action.request_id).await? {
                return replay(&previous, &action.fingerprint);
            }
            return Err(ApiError::version_mismatch(
                live.record.version,
                action.expected_version,
            ));
        }
        let mut game = live.game.clone();
        let applied = game.apply(seat, &command, &live.rules, &mut ServerDice(rand::rng()));
        let events = match applied {
            Ok(events) if !events.is_empty() => events,
            // Refused, or nothing changed (a second Roll in one turn): no
            // new version, unless the id belongs to another request.
            answer => {
                if let Some(previous) = self.previous_answer(&scope, &action.request_id).await? {
                    return replay(&previous, &action.fingerprint);
                }
                answer?;
                return live.snapshot();
            }
        };
        let expected = live.record.version;
        let mut record = live.record.clone();
        record.version = expected + 1;
        record.state = serde_json::to_string(&game).map_err(unserialisable)?;
        let records = event_records(record.version, &events);
        let next = Live {
            record,
            game,
            rules: live.rules.clone(),
            last_events: api_events(&records),
            stale: false,
        };
        let snapshot = next.snapshot()?;
        let request = (!action.request_id.is_empty()).then(|| RequestRecord {
            scope: scope.clone(),
            request_id: action.request_id.clone(),
            fingerprint: action.fingerprint.clone(),
            response: snapshot.encode_to_vec(),
        });
        if let Err(e) = self
            .store
            .commit(&next.record, expected, &records, request.as_ref())
            .await
        {
            // The store may hold another version (another writer, or a
            // write whose outcome is unknown): read it again next time.
            live.stale = true;
            // The same request may have been applied there: answer as it was.
            if matches!(e, StoreError::Conflict { .. } | StoreError::Duplicate)
                && let Ok(Some(previous)) = self.previous_answer(&scope, &action.request_id).await
            {
                return replay(&previous, &action.fingerprint);
            }
            return Err(ApiError::store(e));
        }
        tracing::debug!(game_id, %seat, version = next.record.version, "action applied");
        *live = next;
        // Watchers get the update; with none, it is not even built.
        if slot.updates.receiver_count() > 0 {
            let update = Arc::new(pb::GameUpdate {
                version: live.record.version,
                events: live.last_events.clone(),
                game: Some(snapshot.clone()),
            });
            let _ = slot.updates.send(update);
        }
        Ok(snapshot)
    }

    /// Tells this server's watchers of a game what another server did to
    /// it, from `from` (the version they saw) to the game just read back.
    async fn catch_up_watchers(
        &self,
        slot: &Slot,
        from: u64,
        reloaded: &Live,
    ) -> Result<(), ApiError> {
        if slot.updates.receiver_count() == 0 || reloaded.record.version <= from {
            return Ok(());
        }
        let game_id = &reloaded.record.game_id;
        let past = self
            .store
            .events_after(game_id, from)
            .await
            .map_err(ApiError::store)?;
        let updates = updates_from(&past, reloaded.record.version, reloaded.snapshot()?);
        for update in updates {
            let _ = slot.updates.send(Arc::new(update));
        }
        Ok(())
    }

    /// The stored answer to a request id already used in `scope`.
    async fn previous_answer(
        &self,
        scope: &str,
        request_id: &str,
    ) -> Result<Option<RequestRecord>, ApiError> {
        if request_id.is_empty() {
            return Ok(None);
        }
        self.store
            .request(scope, request_id)
            .await
            .map_err(ApiError::store)
    }

    /// The updates after `from_version`, then live ones, until the client
    /// goes away or the server shuts down.
    pub async fn watch(
        &self,
        game_id: &str,
        from_version: u64,
    ) -> Result<tokio::sync::mpsc::Receiver<Result<pb::GameUpdate, tonic::Status>>, ApiError> {
        let game_id = &game_id_of(game_id)?;
        let slot = self.slot(game_id);
        // Subscribe while holding the game: nothing can slip in between.
        let (mut updates, current, snapshot) = {
            let mut guard = slot.live.lock().await;
            let live = self.current(&slot, &mut guard, game_id, 0).await?;
            (
                slot.updates.subscribe(),
                live.record.version,
                live.snapshot()?,
            )
        };
        let past = self
            .store
            .events_after(game_id, from_version)
            .await
            .map_err(ApiError::store)?;
        let catch_up = updates_from(&past, current, snapshot);
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let mut shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            for update in catch_up {
                if tx.send(Ok(update)).await.is_err() {
                    return;
                }
            }
            loop {
                tokio::select! {
                    _ = shutdown.changed() => {
                        let stopping = ApiError::new(Code::Unavailable, "SHUTTING_DOWN", "the server is shutting down; resume from the last version seen");
                        let _ = tx.send(Err(stopping.into())).await;
                        return;
                    }
                    update = updates.recv() => match update {
                        Ok(update) if update.version > current => {
                            if tx.send(Ok((*update).clone())).await.is_err() {
                                return;
                            }
                        }
                        Ok(_) => {}
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            let behind = ApiError::new(Code::ResourceExhausted, "WATCHER_BEHIND", "this watcher fell behind; resume from the last version seen");
                            let _ = tx.send(Err(behind.into())).await;
                            return;
                        }
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                    _ = tx.closed() => return,
                }
            }
        });
        Ok(rx)
    }
}

/// The stored answer to a retried request, if it is the same request.
fn replay<M: Message + Default>(
    previous: &RequestRecord,
    fingerprint: &[u8],
) -> Result<M, ApiError> {
    if previous.fingerprint != fingerprint {
        return Err(ApiError::new(
            Code::InvalidArgument,
            "REQUEST_ID_REUSED",
            "this request_id was used for another request",
        )
        .with("field", "request_id"));
    }
    M::decode(previous.response.as_slice()).map_err(corrupt)
}

/// A game in memory that vanished under its lock: never expected.
fn lost() -> ApiError {
    ApiError::new(Code::Internal, "INTERNAL", "the game was lost from memory")
}

/// Stored data that does not read back as written.
fn corrupt(e: impl std::fmt::Display) -> ApiError {
    ApiError::data_loss(e)
}

/// Data of the server's own making that cannot be serialised (never
/// expected: a bug, not the caller's fault).
fn unserialisable(e: impl std::fmt::Display) -> ApiError {
    tracing::error!(error = %e, "serialising a game failed");
    ApiError::new(Code::Internal, "INTERNAL", "the game could not be saved")
}

#[cfg(test)]
mod tests {
    use super::*;
    use bg_store::{Durability, SqliteStore};

    #[tokio::test]
    async fn asking_for_games_that_do_not_exist_keeps_nothing_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("games.db"), Durability::Normal)
            .await
            .unwrap();
        let plugins = Arc::new(PluginHost::new(dir.path()));
        let games = Games::new(store, [7; 32], plugins, watch::channel(false).1);
        for _ in 0..100 {
            let unknown = uuid::Uuid::now_v7().to_string();
            let refused = games.get(&unknown).await.unwrap_err();
            assert_eq!(refused.reason, "GAME_NOT_FOUND");
        }
        assert_eq!(games.live_games(), 0);
    }
}
