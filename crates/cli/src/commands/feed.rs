//! `bgctl feed`: the fleet feed (WatchMatches), one line an event, each
//! ending with its cursor, to resume from with `--after`.

use anyhow::Result;
use bg_api::v1 as pb;
use clap::ValueEnum;

use super::matches::{Credential, Filter};
use super::{Context, Online};
use crate::connection::explain;

/// An event kind (`--kind`).
#[derive(Clone, Copy, ValueEnum)]
pub enum KindArg {
    Created,
    GameEnded,
    MatchEnded,
    Removed,
    Action,
}

/// What `bgctl feed` takes.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub credential: Credential,
    #[command(flatten)]
    pub filter: Filter,
    /// Resume after this cursor (the last one printed).
    #[arg(long, conflicts_with = "from_oldest")]
    pub after: Option<String>,
    /// From the oldest event the feed holds (default: from now on).
    #[arg(long)]
    pub from_oldest: bool,
    /// Only these kinds (repeatable; default: all but `action`).
    #[arg(long = "kind", value_enum)]
    pub kinds: Vec<KindArg>,
    /// Stop after this many events (0: follow until interrupted).
    #[arg(long, default_value_t = 0)]
    pub count: usize,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    cx.online(async |o| feed(o, args).await)
}

async fn feed(o: &mut Online, args: Args) -> Result<()> {
    let request = pb::WatchMatchesRequest {
        cursor: args.after.clone().unwrap_or_default(),
        from_oldest: args.from_oldest,
        filter: Some(args.filter.pb()),
        kinds: args
            .kinds
            .iter()
            .map(|k| match k {
                KindArg::Created => pb::MatchEventKind::Created,
                KindArg::GameEnded => pb::MatchEventKind::GameEnded,
                KindArg::MatchEnded => pb::MatchEventKind::MatchEnded,
                KindArg::Removed => pb::MatchEventKind::Removed,
                KindArg::Action => pb::MatchEventKind::Action,
            } as i32)
            .collect(),
    };
    let mut events = o
        .client
        .watch_matches(args.credential.request(request)?)
        .await
        .map_err(explain)?
        .into_inner();
    let mut seen = 0;
    while let Some(event) = events.message().await.map_err(explain)? {
        if event.kind == pb::MatchEventKind::Unspecified as i32 {
            continue;
        }
        println!("{}", crate::render::match_event(&event));
        seen += 1;
        if seen == args.count {
            break;
        }
    }
    Ok(())
}
