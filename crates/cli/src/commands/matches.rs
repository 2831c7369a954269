//! `bgctl matches`: the matches a server lists (ListMatches), a page at a
//! time or all of them, with the operator's token (or the client
//! certificate the TLS options give).

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use bg_api::v1 as pb;
use clap::ValueEnum;

use super::{Context, Online};
use crate::connection::{authorized, explain};

/// A match's state (`--state`).
#[derive(Clone, Copy, ValueEnum)]
pub enum StateArg {
    InProgress,
    Finished,
    Abandoned,
}

/// The order (`--order`).
#[derive(Clone, Copy, ValueEnum)]
pub enum OrderArg {
    Created,
    Updated,
}

/// Who lists: the operator's token (else a client certificate).
#[derive(clap::Args)]
pub struct Credential {
    /// A file holding the operator's token (the server's
    /// --operator-token-file). Without it, the client certificate of
    /// --tls-cert lists the matches it created.
    #[arg(long, env = "BGCTL_OPERATOR_TOKEN_FILE")]
    pub operator_token_file: Option<PathBuf>,
}

impl Credential {
    /// A request carrying the operator's token, if one is given.
    pub fn request<T>(&self, message: T) -> Result<tonic::Request<T>> {
        match &self.operator_token_file {
            Some(path) => {
                let token = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                authorized(message, token.trim())
            }
            None => Ok(tonic::Request::new(message)),
        }
    }
}

/// What the fleet commands filter by.
#[derive(clap::Args)]
pub struct Filter {
    /// Only this variant (repeatable).
    #[arg(long = "variant")]
    pub variants: Vec<String>,
    /// A label selector, e.g. `tournament=spring,table in (1,2),!test`.
    #[arg(long)]
    pub selector: Option<String>,
    /// Only matches with this player id in either seat.
    #[arg(long)]
    pub player: Option<String>,
}

impl Filter {
    pub fn pb(&self) -> pb::MatchFilter {
        pb::MatchFilter {
            variants: self.variants.clone(),
            label_selector: self.selector.clone().unwrap_or_default(),
            player: self.player.clone().unwrap_or_default(),
            ..Default::default()
        }
    }
}

/// What `bgctl matches` takes.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub credential: Credential,
    #[command(flatten)]
    pub filter: Filter,
    /// Only matches in this state (repeatable).
    #[arg(long = "state", value_enum)]
    pub states: Vec<StateArg>,
    /// Only matches waiting for this player to act ("your move").
    #[arg(long)]
    pub to_act: Option<String>,
    /// By creation (the default) or by last change.
    #[arg(long, value_enum, default_value_t = OrderArg::Created)]
    pub order: OrderArg,
    /// Newest first.
    #[arg(long)]
    pub desc: bool,
    /// Matches a page (the server's default: 100; at most 1,000).
    #[arg(long, default_value_t = 0)]
    pub page_size: i32,
    /// The page after this token (printed after the previous page).
    #[arg(long, default_value = "")]
    pub page_token: String,
    /// Every page, not only the first.
    #[arg(long)]
    pub all: bool,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    cx.online(async |o| matches(o, args).await)
}

async fn matches(o: &mut Online, args: Args) -> Result<()> {
    let mut request = pb::ListMatchesRequest {
        filter: Some(pb::MatchFilter {
            states: args
                .states
                .iter()
                .map(|s| match s {
                    StateArg::InProgress => pb::MatchState::InProgress,
                    StateArg::Finished => pb::MatchState::Finished,
                    StateArg::Abandoned => pb::MatchState::Abandoned,
                } as i32)
                .collect(),
            to_act_player: args.to_act.clone().unwrap_or_default(),
            ..args.filter.pb()
        }),
        order_by: match args.order {
            OrderArg::Created => pb::MatchOrder::Created,
            OrderArg::Updated => pb::MatchOrder::Updated,
        } as i32,
        descending: args.desc,
        page_size: args.page_size,
        page_token: args.page_token.clone(),
        read_mask: None,
    };
    loop {
        let page = o
            .client
            .list_matches(args.credential.request(request.clone())?)
            .await
            .map_err(explain)?
            .into_inner();
        for game in &page.matches {
            println!("{}", crate::render::summary(game));
        }
        if page.next_page_token.is_empty() {
            println!(
                "(last page; follow changes since with `bgctl feed --after {}`)",
                page.cursor
            );
            return Ok(());
        }
        if !args.all {
            println!("next page: --page-token {}", page.next_page_token);
            return Ok(());
        }
        request.page_token = page.next_page_token;
    }
}
