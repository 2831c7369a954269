//! The commands that talk to a server, one module each; `main.rs` parses
//! the command line and calls them. `act` holds the six actions of a
//! seat (roll, move, double, resign, decide, abandon), which share one
//! flow; `verify` also checks a record from a file, offline.

pub mod act;
pub mod analyze;
pub mod export;
pub mod hint;
pub mod new;
pub mod show;
pub mod variants;
pub mod verify;
pub mod watch;

use std::path::{Path, PathBuf};

use anyhow::Result;
use bg_api::v1 as pb;

use crate::client::{Client, Tokens, Transport, connect};

/// A connection to a server, and the local tokens file.
pub struct Online {
    pub client: Client,
    pub tokens: Tokens,
    pub tokens_path: PathBuf,
    pub plugin_dir: PathBuf,
}

impl Online {
    pub async fn connect(
        transport: &Transport,
        addr: &str,
        tokens_path: &Path,
        plugin_dir: &Path,
    ) -> Result<Online> {
        Ok(Online {
            client: connect(transport, addr).await?,
            tokens: Tokens::load(tokens_path)?,
            tokens_path: tokens_path.to_path_buf(),
            plugin_dir: plugin_dir.to_path_buf(),
        })
    }

    /// A game id as given, or the whole id of the game of the tokens file
    /// it is the start or end of.
    pub fn whole_id(&self, id: &str) -> Result<String> {
        Ok(self.tokens.resolve(id)?.unwrap_or_else(|| id.to_string()))
    }
}

/// GetGame of `game_id`, every field.
pub fn get(game_id: &str) -> pb::GetGameRequest {
    pb::GetGameRequest {
        read_mask: None,
        game_id: game_id.to_string(),
    }
}
