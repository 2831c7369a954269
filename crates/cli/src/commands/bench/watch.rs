//! `bgctl bench watch`: how soon a watcher hears of an action, on the
//! same server or on another replica: a WatchGame stream of the match, or
//! (`--feed`) the fleet feed of every match (WatchMatches, its actions).

use std::time::Instant;

use anyhow::{Context as _, Result};
use bg_api::v1 as pb;
use bg_api::v1::game_service_client::GameServiceClient;
use tonic::transport::Channel;

use super::{channels, quantile_ms};
use crate::commands::Context;
use crate::connection::{Transport, authorized, explain};

/// What `bgctl bench watch` takes.
#[derive(clap::Args)]
pub struct Args {
    /// Actions to time.
    #[arg(long, default_value_t = 500)]
    pub actions: usize,
    /// Follow the fleet feed (every match's actions) instead of the
    /// match's own WatchGame stream: the delay from an action's answer to
    /// its event in the feed. Needs the operator's token.
    #[arg(long, requires = "operator_token_file")]
    pub feed: bool,
    #[command(flatten)]
    pub credential: crate::commands::matches::Credential,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    let transport = cx.transport()?;
    cx.block_on(watch(&transport, &cx.addresses(), &args))
}

/// Where the updates come from: the match's stream, or the fleet feed.
enum Updates {
    Game(tonic::Streaming<pb::GameUpdate>),
    Feed(tonic::Streaming<pb::MatchEvent>),
}

impl Updates {
    /// Waits for `game_id` at `version` (or later).
    async fn reach(&mut self, game_id: &str, version: u64) -> Result<()> {
        loop {
            let reached = match self {
                Updates::Game(stream) => {
                    let update = stream
                        .message()
                        .await
                        .map_err(explain)?
                        .context("the watch stream ended")?;
                    update.version >= version
                }
                Updates::Feed(stream) => {
                    let event = stream
                        .message()
                        .await
                        .map_err(explain)?
                        .context("the feed ended")?;
                    event.game_id == game_id && event.version >= version
                }
            };
            if reached {
                return Ok(());
            }
        }
    }
}

/// `bgctl bench watch`: plays a long match on the first server and
/// watches it on the last one; for each action, the time from its answer
/// to the watcher's update of that version.
async fn watch(transport: &Transport, addrs: &[String], args: &Args) -> Result<()> {
    let actions = args.actions;
    let channels = channels(transport, addrs).await?;
    let mut player = GameServiceClient::new(channels[0].clone());
    let mut watcher = GameServiceClient::new(channels[channels.len() - 1].clone());
    let mut delays = Vec::with_capacity(actions);
    let mut updates = match args.feed {
        false => None,
        true => {
            let request = pb::WatchMatchesRequest {
                kinds: vec![
                    pb::MatchEventKind::Created as i32,
                    pb::MatchEventKind::Action as i32,
                ],
                ..Default::default()
            };
            let stream = watcher
                .watch_matches(args.credential.request(request)?)
                .await
                .map_err(explain)?
                .into_inner();
            Some(Updates::Feed(stream))
        }
    };
    let mut game: Option<(pb::Game, [String; 2])> = None;
    let mut n = 0usize;
    while delays.len() < actions {
        let (current, tokens) = match game.take() {
            Some((current, tokens)) if current.phase != pb::Phase::MatchOver as i32 => {
                (current, tokens)
            }
            _ => {
                let created = player
                    .new_game(pb::NewGameRequest {
                        variant: "standard".into(),
                        settings: Some(pb::MatchSettings {
                            match_length: 25,
                            ..Default::default()
                        }),
                        ..Default::default()
                    })
                    .await
                    .map_err(explain)?
                    .into_inner();
                let current = created.game.context("NewGame returned no game")?;
                if !args.feed {
                    let stream = watcher
                        .watch_game(pb::WatchGameRequest {
                            game_id: current.game_id.clone(),
                            from_version: current.version,
                            read_mask: None,
                        })
                        .await
                        .map_err(explain)?
                        .into_inner();
                    updates = Some(Updates::Game(stream));
                }
                (current, [created.white_token, created.black_token])
            }
        };
        n += 1;
        let next = next_action(&mut player, &current, &tokens, n).await?;
        let answered = Instant::now();
        let stream = updates.as_mut().context("no watch stream")?;
        stream.reach(&next.game_id, next.version).await?;
        delays.push(answered.elapsed());
        game = Some((next, tokens));
    }
    delays.sort_unstable();
    println!(
        "servers={} actions={} {}_delay_ms p50={:.3} p90={:.3} p99={:.3} max={:.3}",
        channels.len(),
        delays.len(),
        if args.feed { "feed" } else { "watch" },
        quantile_ms(&delays, 0.5),
        quantile_ms(&delays, 0.9),
        quantile_ms(&delays, 0.99),
        quantile_ms(&delays, 1.0),
    );
    Ok(())
}

/// The next action of the seat to act (a roll, or a legal play; a cube
/// offered is taken), answered.
async fn next_action(
    client: &mut GameServiceClient<Channel>,
    game: &pb::Game,
    tokens: &[String; 2],
    n: usize,
) -> Result<pb::Game> {
    let token = match pb::Seat::try_from(game.to_act) {
        Ok(pb::Seat::White) => &tokens[0],
        Ok(pb::Seat::Black) => &tokens[1],
        _ => anyhow::bail!("nobody is to act in game {}", game.game_id),
    };
    let game_id = game.game_id.clone();
    let expected_version = game.version;
    let answer = match pb::Phase::try_from(game.phase) {
        Ok(pb::Phase::Roll) => {
            let request = pb::RollRequest {
                read_mask: None,
                game_id,
                expected_version,
                request_id: String::new(),
                dice_seed: String::new(),
            };
            client.roll(authorized(request, token)?).await
        }
        Ok(pb::Phase::Move) => {
            let plays = &game.legal_plays;
            let request = pb::MoveRequest {
                read_mask: None,
                game_id,
                expected_version,
                request_id: String::new(),
                notation: plays[n % plays.len()].notation.clone(),
                moves: Vec::new(),
                dice_seed: String::new(),
            };
            client.r#move(authorized(request, token)?).await
        }
        Ok(pb::Phase::CubeOffered) => {
            let request = pb::DoubleRequest {
                read_mask: None,
                game_id,
                expected_version,
                request_id: String::new(),
                action: pb::DoubleAction::Take as i32,
            };
            client.double(authorized(request, token)?).await
        }
        phase => anyhow::bail!("game {} waits in phase {phase:?}", game.game_id),
    };
    Ok(answer.map_err(explain)?.into_inner())
}
