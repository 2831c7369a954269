//! bgctl's commands, one module each (offline modes included), each with
//! its clap arguments (`Args`) and a `run` that `main.rs` calls. `act`
//! holds the six actions of a seat (roll, move, double, resign, decide,
//! abandon), which share one flow; `bench` a folder of benchmarks.
//!
//! What the commands share lives here: the global options
//! ([`Context`]) and, for those that talk to a server, the connection
//! with the tokens file ([`Online`]).

pub mod act;
pub mod analyze;
pub mod bench;
pub mod export;
pub mod feed;
pub mod hint;
pub mod jans;
pub mod matches;
pub mod new;
pub mod plays;
pub mod plugin_check;
pub mod plugins;
pub mod show;
pub mod variants;
pub mod verify;
pub mod watch;
pub mod webhooks;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use bg_api::v1 as pb;

use crate::connection::{Client, TlsOptions, Transport, connect};
use crate::tokens::Tokens;

/// The global options, as every command sees them.
pub struct Context {
    /// `--addr`: a server, or several comma-separated (the benchmarks).
    pub addr: String,
    pub plugin_dir: PathBuf,
    /// `--tokens`, when given.
    pub tokens: Option<PathBuf>,
    pub tls: TlsOptions,
}

impl Context {
    /// Plain TCP, or TLS as the options and the address say.
    pub fn transport(&self) -> Result<Transport> {
        Transport::new(&self.tls, &self.addr)
    }

    /// The tokens file: `--tokens`, or the default one.
    pub fn tokens_path(&self) -> PathBuf {
        self.tokens.clone().unwrap_or_else(Tokens::default_path)
    }

    /// `--addr`'s servers.
    pub fn addresses(&self) -> Vec<String> {
        crate::parse::addresses(&self.addr)
    }

    /// Runs `work` to its end on a runtime of its own.
    pub fn block_on<T>(&self, work: impl Future<Output = Result<T>>) -> Result<T> {
        tokio::runtime::Runtime::new()?.block_on(work)
    }

    /// Connects to the server, reads the tokens file, and runs `command`
    /// with both.
    pub fn online(&self, command: impl AsyncFnOnce(&mut Online) -> Result<()>) -> Result<()> {
        let tokens = self.tokens_path();
        let transport = self.transport()?;
        self.block_on(async {
            let mut o = Online::connect(&transport, &self.addr, &tokens, &self.plugin_dir).await?;
            command(&mut o).await
        })
    }
}

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

    /// The whole id of a game of the tokens file (one that has seat
    /// tokens), named by its id or any start or end of it.
    pub fn game_of_tokens_file(&self, id: &str) -> Result<String> {
        match self.tokens.resolve(id)? {
            Some(game_id) => Ok(game_id),
            None => bail!(
                "no game {id} in the tokens file {}: give the whole game id, or its start or end \
                 if `bgctl new` made it here (see --tokens)",
                self.tokens_path.display()
            ),
        }
    }
}

/// GetGame of `game_id`, every field.
pub fn get(game_id: &str) -> pb::GetGameRequest {
    pb::GetGameRequest {
        read_mask: None,
        game_id: game_id.to_string(),
    }
}
