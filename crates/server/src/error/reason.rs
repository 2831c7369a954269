//! The API's reasons, in one closed list: every error the server sends
//! carries exactly one of these in its `google.rpc.ErrorInfo.reason`,
//! with the gRPC code written beside it here. docs/api.md lists the same
//! reasons, each once, with its code and meaning (a test checks it), so
//! adding a reason is one line here and one row there.
//!
//! The engine's reasons (a refused command, a variant's error kind) are
//! part of this list: [`Reason::of_command`] and [`Reason::of_rules`]
//! map them with exhaustive matches, and a test checks that the strings
//! agree with the engine's own.

use bg_engine::game::{CommandError, RulesErrorKind};
use tonic::Code;

macro_rules! reasons {
    ($($(#[$doc:meta])* $reason:ident = $text:literal, $code:ident, $meaning:literal;)*) => {
        /// Why a call was refused or failed, as the caller reads it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Reason {
            $($(#[$doc])* $reason,)*
        }

        impl Reason {
            /// Every reason, in the order docs/api.md lists them.
            pub const ALL: &'static [Reason] = &[$(Reason::$reason,)*];

            /// The stable machine-readable text (`ErrorInfo.reason`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Reason::$reason => $text,)*
                }
            }

            /// The gRPC status code the reason is sent with.
            pub const fn code(self) -> Code {
                match self {
                    $(Reason::$reason => Code::$code,)*
                }
            }

            /// One line saying what it means and what a client does.
            pub const fn meaning(self) -> &'static str {
                match self {
                    $(Reason::$reason => $meaning,)*
                }
            }
        }
    };
}

reasons! {
    // The request itself.
    InvalidArgument = "INVALID_ARGUMENT", InvalidArgument,
        "A field of the request is malformed or out of range; metadata `field` names it.";
    MalformedRequest = "MALFORMED_REQUEST", InvalidArgument,
        "The request's bytes are not the method's message.";
    RequestTooLarge = "REQUEST_TOO_LARGE", OutOfRange,
        "The request is over the size limit (64 KiB).";
    UnknownMethod = "UNKNOWN_METHOD", Unimplemented,
        "No such method on this server.";
    UnsupportedCompression = "UNSUPPORTED_COMPRESSION", Unimplemented,
        "The request is compressed otherwise than with gzip, deflate or zstd.";
    RequestIdReused = "REQUEST_ID_REUSED", InvalidArgument,
        "This request id was used before for a different request.";
    // Who may act.
    TokenMissing = "TOKEN_MISSING", Unauthenticated,
        "The action needs a seat's token (`authorization: Bearer ...`).";
    TokenAmbiguous = "TOKEN_AMBIGUOUS", Unauthenticated,
        "The request carries more than one `authorization` header.";
    TokenInvalid = "TOKEN_INVALID", PermissionDenied,
        "The token is not the token of the seat to act in this game.";
    // The game and its version.
    GameNotFound = "GAME_NOT_FOUND", NotFound,
        "No game with this id (or it was removed by retention).";
    VersionMismatch = "VERSION_MISMATCH", Aborted,
        "The game is at another version than expected; metadata `current_version`: read it and decide again.";
    VersionAhead = "VERSION_AHEAD", OutOfRange,
        "A watch asked to start after a version the game has not reached.";
    AnswerUnavailable = "ANSWER_UNAVAILABLE", FailedPrecondition,
        "A retried request's first answer can no longer be rebuilt; read the game.";
    // The rules of the match (the engine's refusals).
    NotYourTurn = "NOT_YOUR_TURN", FailedPrecondition,
        "The other seat must act first; the message says what the game waits for.";
    WrongPhase = "WRONG_PHASE", FailedPrecondition,
        "The seat to act asked for something else than the match waits for.";
    CubeUnavailable = "CUBE_UNAVAILABLE", FailedPrecondition,
        "The cube cannot be turned now (no cube in this game, not this seat's, Crawford, dead cube...).";
    ResignationNotAllowed = "RESIGNATION_NOT_ALLOWED", FailedPrecondition,
        "This resignation, offer or answer is not allowed now.";
    MatchOver = "MATCH_OVER", FailedPrecondition,
        "The match has ended: nothing more can be played or hinted.";
    InvalidStart = "INVALID_START", InvalidArgument,
        "The match cannot be started in the state given.";
    TimeExpired = "TIME_EXPIRED", FailedPrecondition,
        "The acting seat's time ran out before the action arrived; the loss on time is recorded.";
    // The variant's answers (the engine's rules error kinds).
    IllegalPlay = "ILLEGAL_PLAY", FailedPrecondition,
        "The play is not one of the legal plays with these dice.";
    IllegalDecision = "ILLEGAL_DECISION", FailedPrecondition,
        "The choice is not one of those the decision offers.";
    Unsupported = "UNSUPPORTED", FailedPrecondition,
        "The variant does not do this (a start position it cannot take).";
    InvalidOption = "INVALID_OPTION", InvalidArgument,
        "An option the variant does not take, or a value it does not accept; metadata `field`.";
    InvalidInput = "INVALID_INPUT", Internal,
        "The variant could not work with the stored state (the server's fault, not the caller's).";
    VariantFault = "VARIANT_FAULT", Internal,
        "The variant's plugin failed on this call (a panic, a crash, broken rules, past its deadline); nothing changed.";
    VariantUnavailable = "VARIANT_UNAVAILABLE", Unavailable,
        "The variant cannot be called now and was not called; metadata `retry_after_ms`: send the same request again then.";
    VariantNotLoaded = "VARIANT_NOT_LOADED", FailedPrecondition,
        "The game's variant (at its version) is not loaded on this server.";
    // The computer player, hints and analysis.
    HintsOff = "HINTS_OFF", FailedPrecondition,
        "The match does not give hints (its `hints` setting is off).";
    NoBot = "NO_BOT", FailedPrecondition,
        "The variant has no computer player on this server (no net beside its plugin).";
    AnalysisUnavailable = "ANALYSIS_UNAVAILABLE", FailedPrecondition,
        "The match cannot be analysed (nothing to judge, or its record cannot be replayed).";
    // The fleet: lists and the feed.
    FleetAccessDenied = "FLEET_ACCESS_DENIED", PermissionDenied,
        "Listing and following matches needs the operator's token or a client certificate; a seat token is refused.";
    CursorExpired = "CURSOR_EXPIRED", FailedPrecondition,
        "The cursor is older than the feed's window; metadata `oldest_cursor`: list again and follow from the list's cursor.";
    // Records.
    UnsupportedFormat = "UNSUPPORTED_FORMAT", FailedPrecondition,
        "The match cannot be written in this format (a variant a .mat or SGF cannot hold).";
    ArchiveUnavailable = "ARCHIVE_UNAVAILABLE", Unavailable,
        "A finished match could not be written to the archive folder; it stays stored.";
    // Limits, load and shutdown.
    RateLimited = "RATE_LIMITED", ResourceExhausted,
        "This caller creates games faster than the server allows; metadata `retry_after_ms`.";
    TooManyWatchers = "TOO_MANY_WATCHERS", ResourceExhausted,
        "The game has as many watchers as the server allows.";
    WatcherBehind = "WATCHER_BEHIND", ResourceExhausted,
        "This watcher fell behind; resume from the last version seen.";
    Overloaded = "OVERLOADED", Unavailable,
        "The server had more work than it could start in time; nothing changed: send it again.";
    ShuttingDown = "SHUTTING_DOWN", Unavailable,
        "The server is shutting down; resume or retry on another replica.";
    // Storage.
    StorageUnavailable = "STORAGE_UNAVAILABLE", Unavailable,
        "The write failed; metadata `stored`: `no` (retry later) or `unknown` (retry with the same request id).";
    DatabaseUnreachable = "DATABASE_UNREACHABLE", Unavailable,
        "The database cannot be reached; nothing was read or changed: retry later.";
    StorageCorrupt = "STORAGE_CORRUPT", DataLoss,
        "This game's stored data is damaged; the operator must restore it.";
    StorageFormatNewer = "STORAGE_FORMAT_NEWER", FailedPrecondition,
        "The game was stored by a newer server; serve it from one.";
    // The server's own faults.
    Internal = "INTERNAL", Internal,
        "The server failed on this call; nothing changed (its log says why).";
    Transport = "TRANSPORT", Unknown,
        "Any other error of the transport, sent with the code the transport gave (UNKNOWN here).";
}

impl Reason {
    /// The reason of a command the engine refused.
    pub fn of_command(e: &CommandError) -> Reason {
        match e {
            CommandError::NotYourTurn(_) => Reason::NotYourTurn,
            CommandError::WrongPhase(_) => Reason::WrongPhase,
            CommandError::CubeUnavailable(_) => Reason::CubeUnavailable,
            CommandError::Resignation(_) => Reason::ResignationNotAllowed,
            CommandError::MatchOver => Reason::MatchOver,
            CommandError::InvalidStart(_) => Reason::InvalidStart,
            CommandError::Rules(r) => Reason::of_rules(r.kind),
        }
    }

    /// The reason of a variant's error.
    pub fn of_rules(kind: RulesErrorKind) -> Reason {
        match kind {
            RulesErrorKind::InvalidInput => Reason::InvalidInput,
            RulesErrorKind::InvalidOption => Reason::InvalidOption,
            RulesErrorKind::IllegalPlay => Reason::IllegalPlay,
            RulesErrorKind::IllegalDecision => Reason::IllegalDecision,
            RulesErrorKind::Unsupported => Reason::Unsupported,
            RulesErrorKind::VariantFault => Reason::VariantFault,
        }
    }
}

/// The canonical name of a gRPC status code (`FAILED_PRECONDITION`), as
/// gRPC's own documents and clients write it.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use bg_engine::game::RulesError;

    use super::*;

    #[test]
    fn every_reason_is_written_once() {
        let mut seen = HashSet::new();
        for r in Reason::ALL {
            assert!(seen.insert(r.as_str()), "{r} twice");
            assert!(
                r.as_str()
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_'),
                "{r}"
            );
            assert!(!r.meaning().is_empty(), "{r}");
        }
    }

    /// docs/api.md's table of reasons: exactly this list, each once, with
    /// its code.
    #[test]
    fn the_api_docs_list_every_reason_once_with_its_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/api.md");
        let docs = std::fs::read_to_string(path).expect("docs/api.md");
        let section = docs
            .split_once("### Every reason")
            .expect("docs/api.md has a section `### Every reason`")
            .1;
        let mut listed = Vec::new();
        for line in section.lines().skip_while(|l| !l.starts_with('|')) {
            if !line.starts_with('|') {
                break;
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let (reason, code) = (cells[1], cells[2]);
            if let (Some(reason), Some(code)) = (
                reason.strip_prefix('`').and_then(|r| r.strip_suffix('`')),
                code.strip_prefix('`').and_then(|c| c.strip_suffix('`')),
            ) {
                listed.push((reason.to_string(), code.to_string()));
            }
        }
        let expected: Vec<(String, String)> = Reason::ALL
            .iter()
            .map(|r| (r.as_str().to_string(), code_name(r.code()).to_string()))
            .collect();
        let mut sorted = listed.clone();
        sorted.sort();
        sorted.dedup_by(|a, b| a.0 == b.0);
        assert_eq!(
            sorted.len(),
            listed.len(),
            "a reason listed twice: {listed:?}"
        );
        for e in &expected {
            assert!(listed.contains(e), "docs/api.md lacks {e:?}");
        }
        for l in &listed {
            assert!(
                expected.contains(l),
                "docs/api.md lists {l:?}, which is not a reason with that code"
            );
        }
    }

    #[test]
    fn the_engines_reasons_are_the_apis() {
        for &kind in RulesErrorKind::ALL {
            assert_eq!(Reason::of_rules(kind).as_str(), kind.reason());
        }
        let refused = [
            CommandError::NotYourTurn(String::new()),
            CommandError::WrongPhase(String::new()),
            CommandError::CubeUnavailable(String::new()),
            CommandError::Resignation(String::new()),
            CommandError::MatchOver,
            CommandError::InvalidStart(String::new()),
            CommandError::Rules(RulesError {
                kind: RulesErrorKind::IllegalPlay,
                message: String::new(),
            }),
        ];
        for e in refused {
            assert_eq!(Reason::of_command(&e).as_str(), e.reason());
        }
    }
}
