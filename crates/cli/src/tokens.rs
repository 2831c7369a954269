//! The local tokens file: the seat tokens of the games made here, so that
//! two terminals can play one game, and what `verify` needs of a match
//! (the commitment `bgctl new` saw, the seeds given through bgctl).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// Seat tokens kept between invocations, so two terminals can play one
/// game: `{ game_id: { "white": token, "black": token, "commitment":
/// hex, "white_seed": text, "black_seed": text } }` (for `verify`: the
/// commitment of a match's verifiable dice, and the seeds given through
/// bgctl).
#[derive(Default, Serialize, Deserialize)]
pub struct Tokens(BTreeMap<String, BTreeMap<String, String>>);

impl Tokens {
    pub fn default_path() -> PathBuf {
        std::env::var_os("BGCTL_TOKENS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let home = std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| PathBuf::from("."));
                home.join(".bgctl-tokens.json")
            })
    }

    pub fn load(path: &Path) -> Result<Tokens> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Tokens::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        use std::io::Write;
        let tmp = path.with_extension("tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        // The tokens are secrets: the file is the user's alone from the
        // moment it exists.
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options
            .open(&tmp)
            .with_context(|| format!("writing {}", tmp.display()))?;
        file.write_all(serde_json::to_string_pretty(self)?.as_bytes())?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
        }
        std::fs::rename(&tmp, path)?;
        Ok(())
    }

    pub fn insert(&mut self, game_id: &str, white: &str, black: &str) {
        let seats = self.0.entry(game_id.to_string()).or_default();
        seats.insert("white".into(), white.into());
        seats.insert("black".into(), black.into());
    }

    /// The whole id of the game `id` names: itself when the file holds it,
    /// else the one game of the file whose id starts or ends with it (ids
    /// begin with their creation time, so their ends tell games apart
    /// best). `None` when no game of the file does; an error when several
    /// do.
    pub fn resolve(&self, id: &str) -> Result<Option<String>> {
        if id.is_empty() || self.0.contains_key(id) {
            return Ok(Some(id.to_string()));
        }
        let matching: Vec<&String> = self
            .0
            .keys()
            .filter(|k| k.starts_with(id) || k.ends_with(id))
            .collect();
        match matching.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some((*one).clone())),
            several => bail!(
                "{id} is part of {} game ids in the tokens file: give more of one (e.g. {})",
                several.len(),
                several
                    .iter()
                    .take(3)
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The commitment to the server seed `bgctl new` saw, for `verify`.
    pub fn set_commitment(&mut self, game_id: &str, commitment: &str) {
        let game = self.0.entry(game_id.to_string()).or_default();
        game.insert("commitment".into(), commitment.into());
    }

    pub fn commitment(&self, game_id: &str) -> Option<String> {
        self.0.get(game_id)?.get("commitment").cloned()
    }

    /// The seed `seat` gave for the verifiable dice through bgctl.
    pub fn set_seed(&mut self, game_id: &str, seat: &str, seed: &str) {
        let game = self.0.entry(game_id.to_string()).or_default();
        game.insert(format!("{seat}_seed"), seed.into());
    }

    pub fn seed(&self, game_id: &str, seat: &str) -> Option<String> {
        self.0.get(game_id)?.get(&format!("{seat}_seed")).cloned()
    }

    pub fn get(&self, game_id: &str, seat: &str) -> Result<String> {
        let token = self
            .0
            .get(game_id)
            .and_then(|s| s.get(seat))
            .cloned()
            .with_context(|| {
                format!("no {seat} token for game {game_id} in the tokens file (see --tokens)")
            })?;
        if token.is_empty() {
            bail!("{seat} is played by the service in game {game_id}: it has no token");
        }
        Ok(token)
    }
}
