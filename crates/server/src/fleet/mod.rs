//! The fleet: what a site's backend needs to run many matches. The site's
//! own words on a match (labels, player ids), lists of matches
//! (ListMatches), one feed of every match's events (WatchMatches), and
//! who may list and follow.
//!
//! Everything here reads what the store committed: the feed is a row a
//! commit, written in the commit's own transaction, and read back in
//! commit order; nothing here changes a match. The rules never see
//! labels or players.

pub mod feed;
pub mod labels;
pub mod tokens;
pub mod webhooks;

use std::time::Duration;

pub use tokens::{Cursor, PageToken, TokenKey};

use crate::error::{ApiError, Reason};

/// How long the feed keeps events by default: a day.
pub const DEFAULT_FEED_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// Who lists and follows matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// The operator (its token): every match.
    Operator,
    /// A backend by its client certificate: the matches created under it.
    Owner(String),
}

impl Access {
    /// The owner a list is limited to (None: all).
    pub fn owner(&self) -> Option<&str> {
        match self {
            Access::Operator => None,
            Access::Owner(owner) => Some(owner),
        }
    }

    /// Whether the caller may see a match created by `owner`.
    pub fn sees(&self, owner: &str) -> bool {
        match self {
            Access::Operator => true,
            Access::Owner(me) => me == owner,
        }
    }

    /// The access a request's credentials give: the operator's token
    /// (`authorization: Bearer ...`, compared by digest) or a client
    /// certificate. A seat token, or no credential, is refused.
    pub fn of(
        bearer: Option<&str>,
        certified: Option<&str>,
        operator_token: Option<&str>,
    ) -> Result<Access, ApiError> {
        use sha2::{Digest, Sha256};
        match (bearer, operator_token) {
            (Some(given), Some(operator))
                if Sha256::digest(given.as_bytes()) == Sha256::digest(operator.as_bytes()) =>
            {
                return Ok(Access::Operator);
            }
            (Some(_), _) => {
                return Err(ApiError::new(
                    Reason::FleetAccessDenied,
                    "this token does not list or follow matches (a seat's token never does): send the operator's token, or connect with a client certificate",
                ));
            }
            (None, _) => {}
        }
        match certified {
            Some(owner) => Ok(Access::Owner(owner.to_string())),
            None => Err(ApiError::new(
                Reason::FleetAccessDenied,
                "listing and following matches needs the operator's token (backgammond --operator-token-file) or a client certificate",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operator_token_or_a_certificate_and_never_a_seat_token() {
        let op = Some("s3cret-operator-token");
        assert_eq!(Access::of(op, None, op).unwrap(), Access::Operator);
        assert_eq!(
            Access::of(None, Some("cert:ab"), op).unwrap(),
            Access::Owner("cert:ab".into())
        );
        for refused in [
            Access::of(Some("a-seat-token"), Some("cert:ab"), op),
            Access::of(Some("a-seat-token"), None, None),
            Access::of(None, None, op),
            Access::of(None, None, None),
        ] {
            assert_eq!(refused.unwrap_err().reason, Reason::FleetAccessDenied);
        }
    }
}
