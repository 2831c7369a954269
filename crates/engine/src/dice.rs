//! A throw of two dice.

use std::fmt;

/// Two dice as thrown. A double (equal dice) is played four times in the
/// variants on the standard board; how many moves a throw gives is each
/// variant's rule, not this type's.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Dice {
    pub d1: u8,
    pub d2: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a die shows 1 to 6, not {0}")]
pub struct DiceError(pub u32);

impl Dice {
    #[inline]
    pub fn new(d1: u8, d2: u8) -> Result<Dice, DiceError> {
        for d in [d1, d2] {
            if !(1..=6).contains(&d) {
                return Err(DiceError(u32::from(d)));
            }
        }
        Ok(Dice { d1, d2 })
    }

    #[inline]
    pub fn is_double(self) -> bool {
        self.d1 == self.d2
    }

    /// The larger die first.
    #[inline]
    pub fn high_low(self) -> (u8, u8) {
        (self.d1.max(self.d2), self.d1.min(self.d2))
    }

    /// All 21 distinct throws, for exhaustive tests.
    pub fn all() -> impl Iterator<Item = Dice> {
        (1..=6u8).flat_map(|a| (a..=6).map(move |b| Dice { d1: b, d2: a }))
    }
}

impl fmt::Display for Dice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.d1, self.d2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dice_outside_one_to_six_are_refused() {
        assert!(Dice::new(0, 3).is_err());
        assert!(Dice::new(3, 7).is_err());
        assert!(Dice::new(6, 6).unwrap().is_double());
        assert_eq!(Dice::all().count(), 21);
    }
}
