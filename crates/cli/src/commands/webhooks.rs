//! `bgctl webhooks`: where the server's webhook deliveries stand
//! (ListWebhookDeliveries, the operator's token): each endpoint counted,
//! then the deliveries, the newest first, filtered by endpoint, state,
//! match or event.

use anyhow::Result;
use bg_api::v1 as pb;
use clap::ValueEnum;

use super::matches::Credential;
use super::{Context, Online};
use crate::connection::explain;

/// A delivery's state (`--state`).
#[derive(Clone, Copy, ValueEnum)]
pub enum StateArg {
    Pending,
    Delivered,
    Failed,
}

/// What `bgctl webhooks` takes.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub credential: Credential,
    /// Only this endpoint's deliveries (its name in the webhooks file).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Only deliveries in this state.
    #[arg(long, value_enum)]
    pub state: Option<StateArg>,
    /// Only this match's deliveries.
    #[arg(long)]
    pub game: Option<String>,
    /// Only this event's deliveries (its id, the `webhook-id` sent).
    #[arg(long)]
    pub event: Option<String>,
    /// At most this many deliveries (the server's default: 100; at most
    /// 1,000; 0 with --counts: none).
    #[arg(long, default_value_t = 0)]
    pub limit: i32,
    /// The endpoints' counts only.
    #[arg(long)]
    pub counts: bool,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    cx.online(async |o| webhooks(o, args).await)
}

async fn webhooks(o: &mut Online, args: Args) -> Result<()> {
    let request = pb::ListWebhookDeliveriesRequest {
        endpoint: args.endpoint.clone().unwrap_or_default(),
        state: match args.state {
            None => pb::DeliveryState::Unspecified,
            Some(StateArg::Pending) => pb::DeliveryState::Pending,
            Some(StateArg::Delivered) => pb::DeliveryState::Delivered,
            Some(StateArg::Failed) => pb::DeliveryState::Failed,
        } as i32,
        game_id: args.game.clone().unwrap_or_default(),
        event_id: args.event.clone().unwrap_or_default(),
        page_size: if args.counts { 1 } else { args.limit },
    };
    let listed = o
        .client
        .list_webhook_deliveries(args.credential.request(request)?)
        .await
        .map_err(explain)?
        .into_inner();
    if listed.endpoints.is_empty() {
        println!("(no webhook endpoints: the server runs without --webhooks-file)");
        return Ok(());
    }
    for e in &listed.endpoints {
        println!("{}", crate::render::webhook_endpoint(e));
    }
    if !args.counts {
        for d in &listed.deliveries {
            println!("{}", crate::render::webhook_delivery(d));
        }
    }
    Ok(())
}
