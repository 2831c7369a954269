//! A match equity table: a player's chance of winning a match from a
//! score, each side counted by the points it still needs ("away").
//!
//! The table built in is Neil Kazaross's "Kazaross XG2" (2011), as GNU
//! Backgammon distributes it (`met/Kazaross-XG2.xml`, its default table,
//! transcribed by Michael Petch): eXtreme Gammon rollouts up to 9-away,
//! gnubg rollouts up to 15, projected to 25. Its licence permits copying
//! with its notice kept; the file is committed unchanged in `met/`.
//!
//! Two tables make one: before the Crawford game (the 1-away row holds
//! the Crawford game itself) and after it, when the trailer plays the
//! leader at 1-away with the cube in use.

use std::sync::OnceLock;

/// The longest match the table holds; a side further away is read as
/// this many away (the equities there differ by a few tenths of a
/// percent).
pub const LONGEST: usize = 25;

/// A match equity table.
#[derive(Clone, Debug, PartialEq)]
pub struct Met {
    /// `pre[i][j]`: the chance of the side `i + 1` away against `j + 1`
    /// away, before the Crawford game or in it.
    pre: Vec<Vec<f32>>,
    /// `post[j]`: the chance of the trailer `j + 1` away against the
    /// leader at 1-away, after the Crawford game.
    post: Vec<f32>,
}

impl Met {
    /// The table built in (Kazaross XG2), or `None` if its file does not
    /// read (a fault of the build, checked by this module's tests).
    pub fn built_in() -> Option<&'static Met> {
        static TABLE: OnceLock<Option<Met>> = OnceLock::new();
        TABLE
            .get_or_init(|| Met::from_gnubg_xml(include_str!("../met/Kazaross-XG2.xml")).ok())
            .as_ref()
    }

    /// Reads a table in GNU Backgammon's XML format (`met.dtd`) whose
    /// tables are explicit: the pre-Crawford rows, then one post-Crawford
    /// row for both players.
    pub fn from_gnubg_xml(xml: &str) -> Result<Met, String> {
        let section = |tag: &str| -> Result<&str, String> {
            let start = xml
                .find(&format!("<{tag}"))
                .ok_or_else(|| format!("no <{tag}>"))?;
            let end = xml[start..]
                .find(&format!("</{tag}>"))
                .ok_or_else(|| format!("<{tag}> is not closed"))?;
            Ok(&xml[start..start + end])
        };
        let rows = |text: &str| -> Result<Vec<Vec<f32>>, String> {
            text.split("<row>")
                .skip(1)
                .map(|row| {
                    row.split("<me>")
                        .skip(1)
                        .map(|cell| {
                            let number = cell.split("</me>").next().unwrap_or("").trim();
                            number
                                .parse::<f32>()
                                .ok()
                                .filter(|p| (0.0..=1.0).contains(p))
                                .ok_or_else(|| format!("{number:?} is not a probability"))
                        })
                        .collect()
                })
                .collect()
        };
        let pre = rows(section("pre-crawford-table")?)?;
        let post = rows(section("post-crawford-table")?)?
            .into_iter()
            .next()
            .ok_or("no post-Crawford row")?;
        if pre.len() < LONGEST || pre.iter().any(|r| r.len() < LONGEST) || post.len() < LONGEST {
            return Err(format!("the tables are not {LONGEST} by {LONGEST}"));
        }
        Ok(Met { pre, post })
    }

    /// The chance that a side `me` away wins the match against one
    /// `them` away, at the start of a game: the Crawford game if one of
    /// them is 1-away and `crawford_played` is false, a post-Crawford
    /// game if it is true. A side at 0 or less away has won.
    pub fn equity(&self, me: i64, them: i64, crawford_played: bool) -> f32 {
        match (me, them) {
            (..=0, _) => 1.0,
            (_, ..=0) => 0.0,
            (1, 1) => 0.5,
            (_, 1) if crawford_played => self.post[Self::index(me)],
            (1, _) if crawford_played => 1.0 - self.post[Self::index(them)],
            _ => self.pre[Self::index(me)][Self::index(them)],
        }
    }

    fn index(away: i64) -> usize {
        usize::try_from(away.clamp(1, LONGEST as i64) - 1).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_is_kazaross_xg2_as_gnubg_ships_it() {
        let met = Met::built_in().expect("the committed table reads");
        // Spot values of the file: 1-away against 2-away in the Crawford
        // game, 2-away against 2-away, the post-Crawford 2-away trailer.
        assert_eq!(met.equity(1, 2, false), 0.67736);
        assert_eq!(met.equity(2, 1, false), 1.0 - 0.67736);
        assert_eq!(met.equity(2, 2, false), 0.5);
        assert_eq!(met.equity(2, 1, true), 0.48803);
        assert_eq!(met.equity(1, 2, true), 1.0 - 0.48803);
        assert_eq!(met.equity(25, 25, false), 0.5);
    }

    #[test]
    fn a_table_is_symmetric_a_leader_is_the_favourite() {
        let met = Met::built_in().expect("the committed table reads");
        for a in 1..=LONGEST as i64 {
            for b in 1..=LONGEST as i64 {
                let sum = met.equity(a, b, false) + met.equity(b, a, false);
                assert!((sum - 1.0).abs() < 1e-4, "{a}-away {b}-away: {sum}");
                if a < b {
                    assert!(met.equity(a, b, false) > 0.5, "{a}-away {b}-away");
                }
            }
        }
    }

    #[test]
    fn a_won_match_and_a_lost_one_are_certain() {
        let met = Met::built_in().expect("the committed table reads");
        assert_eq!(met.equity(0, 3, false), 1.0);
        assert_eq!(met.equity(-2, 3, true), 1.0);
        assert_eq!(met.equity(3, 0, false), 0.0);
        // Further than the table: read at its edge.
        assert_eq!(met.equity(40, 40, false), 0.5);
    }

    #[test]
    fn a_malformed_table_is_refused_with_the_reason() {
        let err = Met::from_gnubg_xml("<met></met>").unwrap_err();
        assert!(err.contains("pre-crawford-table"), "{err}");
        let bad = "<pre-crawford-table><row><me>1.5</me></row></pre-crawford-table>";
        assert!(
            Met::from_gnubg_xml(bad)
                .unwrap_err()
                .contains("probability")
        );
    }
}
