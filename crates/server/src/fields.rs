//! Which fields of a `Game` an answer carries: a request's `read_mask` (a
//! partial response, as in Google's AIP-157) read into the set the answer
//! is built from, so that a field nobody asked for costs nothing, neither
//! to build (a Position ID for every legal play) nor to send.
//!
//! A path is a `Game` field's name, or `legal_plays.<part>` for one part
//! of each legal play. No mask, an empty one, or `*` is every field.

use prost_types::FieldMask;

use crate::error::{ApiError, quote};

/// A field of `backgammon.v1.Game`, numbered as in the proto.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameField {
    GameId = 1,
    Version = 2,
    Variant = 3,
    VariantVersion = 4,
    Options = 5,
    Settings = 6,
    Board = 7,
    Turn = 8,
    Phase = 9,
    ToAct = 10,
    Dice = 11,
    Cube = 12,
    Score = 13,
    GameNumber = 14,
    Crawford = 15,
    Results = 16,
    MatchWinner = 17,
    PositionId = 18,
    LegalPlays = 19,
    PendingDouble = 20,
    ResignationOffer = 21,
    Decision = 22,
    LastRoll = 23,
    LastEvents = 24,
    Scoreboard = 25,
    MatchId = 26,
    Xgid = 27,
    VerifiableDice = 28,
    Clock = 29,
    Bots = 30,
    Geometry = 31,
    Labels = 32,
    Players = 33,
    CreatedAt = 34,
    UpdatedAt = 35,
    State = 36,
}

/// Every `Game` field by its name in the proto (checked against the
/// API's descriptor by a test).
pub const GAME_FIELDS: [(&str, GameField); 36] = [
    ("game_id", GameField::GameId),
    ("version", GameField::Version),
    ("variant", GameField::Variant),
    ("variant_version", GameField::VariantVersion),
    ("options", GameField::Options),
    ("settings", GameField::Settings),
    ("board", GameField::Board),
    ("turn", GameField::Turn),
    ("phase", GameField::Phase),
    ("to_act", GameField::ToAct),
    ("dice", GameField::Dice),
    ("cube", GameField::Cube),
    ("score", GameField::Score),
    ("game_number", GameField::GameNumber),
    ("crawford", GameField::Crawford),
    ("results", GameField::Results),
    ("match_winner", GameField::MatchWinner),
    ("position_id", GameField::PositionId),
    ("legal_plays", GameField::LegalPlays),
    ("pending_double", GameField::PendingDouble),
    ("resignation_offer", GameField::ResignationOffer),
    ("decision", GameField::Decision),
    ("last_roll", GameField::LastRoll),
    ("last_events", GameField::LastEvents),
    ("scoreboard", GameField::Scoreboard),
    ("match_id", GameField::MatchId),
    ("xgid", GameField::Xgid),
    ("verifiable_dice", GameField::VerifiableDice),
    ("clock", GameField::Clock),
    ("bots", GameField::Bots),
    ("geometry", GameField::Geometry),
    ("labels", GameField::Labels),
    ("players", GameField::Players),
    ("created_at", GameField::CreatedAt),
    ("updated_at", GameField::UpdatedAt),
    ("state", GameField::State),
];

/// A part of each legal play (`backgammon.v1.Play`), numbered as in the
/// proto.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayField {
    Moves = 1,
    Notation = 2,
    ResultPositionId = 3,
}

/// Every `Play` field by its name in the proto.
pub const PLAY_FIELDS: [(&str, PlayField); 3] = [
    ("moves", PlayField::Moves),
    ("notation", PlayField::Notation),
    ("result_position_id", PlayField::ResultPositionId),
];

/// The fields an answer carries: one bit per field number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fields {
    game: u64,
    play: u8,
}

impl Fields {
    /// The whole game.
    pub const ALL: Fields = Fields {
        game: u64::MAX,
        play: u8::MAX,
    };

    /// The fields a request's mask names (none: all), or why it names
    /// something that is not there.
    pub fn from_mask(mask: Option<&FieldMask>) -> Result<Fields, ApiError> {
        let Some(mask) = mask.filter(|m| !m.paths.is_empty()) else {
            return Ok(Fields::ALL);
        };
        let mut fields = Fields { game: 0, play: 0 };
        // The parts of the plays asked for one by one; a bare
        // "legal_plays" asks for them all.
        let mut whole_plays = false;
        // "*" asks for every field; the other paths must still name fields.
        let mut every_field = false;
        for path in &mask.paths {
            if path == "*" {
                every_field = true;
                continue;
            }
            let (name, part) = match path.split_once('.') {
                Some((name, part)) => (name, Some(part)),
                None => (path.as_str(), None),
            };
            let field = by_name(&GAME_FIELDS, name).ok_or_else(|| {
                ApiError::invalid(
                    "read_mask",
                    format!("{}: Game has no field of that name", quote(path)),
                )
            })?;
            fields.game |= 1 << field as u64;
            match part {
                None if field == GameField::LegalPlays => whole_plays = true,
                None => {}
                Some(part) if field == GameField::LegalPlays => {
                    let play = by_name(&PLAY_FIELDS, part).ok_or_else(|| {
                        ApiError::invalid(
                            "read_mask",
                            format!(
                                "{}: a Play has no field of that name (moves, notation, result_position_id)",
                                quote(path)
                            ),
                        )
                    })?;
                    fields.play |= 1 << play as u8;
                }
                Some(_) => {
                    return Err(ApiError::invalid(
                        "read_mask",
                        format!(
                            "{}: only the legal plays can be asked for in part; give `{name}`",
                            quote(path)
                        ),
                    ));
                }
            }
        }
        if every_field {
            return Ok(Fields::ALL);
        }
        if whole_plays {
            fields.play = u8::MAX;
        }
        Ok(fields)
    }

    /// These fields, with the whole of each legal play.
    pub fn only(fields: &[GameField]) -> Fields {
        Fields {
            game: fields.iter().fold(0, |bits, &f| bits | 1 << f as u64),
            play: u8::MAX,
        }
    }

    pub fn has(&self, field: GameField) -> bool {
        self.game & (1 << field as u64) != 0
    }

    /// Whether every field asked for is among `these`.
    pub fn within(&self, these: &Fields) -> bool {
        self.game & !these.game == 0
    }

    /// Whether each legal play carries this part (when the plays are sent).
    pub fn play_has(&self, field: PlayField) -> bool {
        self.play & (1 << field as u8) != 0
    }
}

fn by_name<T: Copy>(table: &[(&str, T)], name: &str) -> Option<T> {
    table.iter().find(|(n, _)| *n == name).map(|&(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn mask(paths: &[&str]) -> FieldMask {
        FieldMask {
            paths: paths.iter().map(|p| p.to_string()).collect(),
        }
    }

    /// The numbered fields of a message of the API, from its descriptor.
    fn fields_of(message: &str) -> Vec<(String, i32)> {
        let set = prost_types::FileDescriptorSet::decode(bg_api::v1::FILE_DESCRIPTOR_SET).unwrap();
        let file = set
            .file
            .iter()
            .find(|f| f.package() == "backgammon.v1")
            .unwrap();
        let message = file
            .message_type
            .iter()
            .find(|m| m.name() == message)
            .unwrap();
        message
            .field
            .iter()
            .map(|f| (f.name().to_string(), f.number()))
            .collect()
    }

    #[test]
    fn the_tables_name_every_field_of_game_and_play_with_its_number() {
        let table = |t: &[(&str, i32)]| -> Vec<(String, i32)> {
            t.iter().map(|(n, i)| (n.to_string(), *i)).collect()
        };
        let game: Vec<_> = GAME_FIELDS.iter().map(|(n, f)| (*n, *f as i32)).collect();
        assert_eq!(fields_of("Game"), table(&game));
        let play: Vec<_> = PLAY_FIELDS.iter().map(|(n, f)| (*n, *f as i32)).collect();
        assert_eq!(fields_of("Play"), table(&play));
    }

    #[test]
    fn no_mask_an_empty_one_or_a_star_is_every_field() {
        assert_eq!(Fields::from_mask(None).unwrap(), Fields::ALL);
        assert_eq!(Fields::from_mask(Some(&mask(&[]))).unwrap(), Fields::ALL);
        assert_eq!(
            Fields::from_mask(Some(&mask(&["version", "*"]))).unwrap(),
            Fields::ALL
        );
    }

    #[test]
    fn a_mask_names_fields_and_parts_of_the_plays() {
        let fields =
            Fields::from_mask(Some(&mask(&["version", "legal_plays.notation", "dice"]))).unwrap();
        for (name, field) in GAME_FIELDS {
            let wanted = matches!(name, "version" | "legal_plays" | "dice");
            assert_eq!(fields.has(field), wanted, "{name}");
        }
        assert!(fields.play_has(PlayField::Notation));
        assert!(!fields.play_has(PlayField::Moves));
        assert!(!fields.play_has(PlayField::ResultPositionId));
        let only = Fields::only(&[GameField::Dice, GameField::LegalPlays]);
        assert!(only.has(GameField::Dice) && only.has(GameField::LegalPlays));
        assert!(!only.has(GameField::Board) && only.play_has(PlayField::ResultPositionId));
        // The whole plays, however else they are also named.
        let whole = Fields::from_mask(Some(&mask(&["legal_plays.moves", "legal_plays"]))).unwrap();
        for (_, part) in PLAY_FIELDS {
            assert!(whole.play_has(part));
        }
    }

    #[test]
    fn a_path_to_no_field_is_refused_with_its_name() {
        for path in [
            "",
            "nope",
            "Version",
            "legal_plays.nope",
            "legal_plays.",
            "board.points",
            "version.x",
        ] {
            for paths in [vec!["version", path], vec!["*", path], vec![path, "*"]] {
                let refused = Fields::from_mask(Some(&mask(&paths))).unwrap_err();
                let status = tonic::Status::from(refused);
                assert_eq!(status.code(), tonic::Code::InvalidArgument, "{paths:?}");
                assert!(
                    status.message().contains(&format!("{path:?}")),
                    "{path}: {status:?}"
                );
            }
        }
    }

    /// Issue 34: an error quotes a short prefix of a long bad path, so
    /// that its trailers stay small whatever the caller sent.
    #[test]
    fn a_long_bad_path_is_quoted_by_a_short_prefix() {
        let long = "x".repeat(7000);
        let refused = Fields::from_mask(Some(&mask(&[&long]))).unwrap_err();
        let status = tonic::Status::from(refused);
        assert!(status.message().len() < 200, "{}", status.message());
        assert!(
            status.message().contains("(7000 bytes)"),
            "{}",
            status.message()
        );
        assert!(status.details().len() < 500, "{}", status.details().len());
    }
}
