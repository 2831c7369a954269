use super::*;

/// The seed 00 01 02 ... 1f.
fn counting_seed() -> ServerSeed {
    ServerSeed(std::array::from_fn(|i| i as u8))
}

/// Known answers, computed with Python's own `hmac` and `hashlib`
/// (another implementation of HMAC-SHA256) from the scheme as documented.
#[test]
fn the_dice_are_the_documented_construction_as_another_implementation_computes_it() {
    let seed = counting_seed();
    assert_eq!(
        seed.commitment(),
        "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    );
    let alice = SeatSeeds::new("alice's seed", "").unwrap();
    let dice: Vec<u8> = (0..20).map(|n| die(&seed, &alice, n)).collect();
    assert_eq!(
        dice,
        [1, 4, 2, 1, 1, 4, 4, 3, 2, 4, 3, 3, 2, 5, 6, 5, 2, 1, 2, 5]
    );
    let none = SeatSeeds::default();
    let dice: Vec<u8> = (0..20).map(|n| die(&seed, &none, n)).collect();
    assert_eq!(
        dice,
        [4, 1, 3, 2, 1, 6, 2, 4, 2, 1, 3, 6, 1, 3, 4, 3, 2, 4, 4, 2]
    );
}

/// Chi-square over 600,000 dice of one fixed seed (so the test cannot
/// flake): each face, 5 degrees of freedom, and each ordered pair of
/// consecutive dice (a throw), 35; the bounds are the 0.1% critical
/// values (20.52 and 66.62).
#[test]
fn the_dice_are_uniform_by_a_chi_square_test() {
    let mut dice = FairDice {
        server: counting_seed(),
        seeds: SeatSeeds::new("white", "black").unwrap(),
        thrown: 0,
    };
    const N: usize = 600_000;
    let mut faces = [0u64; 6];
    let mut pairs = [0u64; 36];
    for _ in 0..N / 2 {
        let (a, b) = (dice.next_die(), dice.next_die());
        faces[usize::from(a - 1)] += 1;
        faces[usize::from(b - 1)] += 1;
        pairs[usize::from(a - 1) * 6 + usize::from(b - 1)] += 1;
    }
    let chi = |counts: &[u64], total: f64| -> f64 {
        let expected = total / counts.len() as f64;
        counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum()
    };
    let faces_chi = chi(&faces, N as f64);
    let pairs_chi = chi(&pairs, (N / 2) as f64);
    assert!(faces_chi < 20.52, "faces {faces:?}: chi-square {faces_chi}");
    assert!(pairs_chi < 66.62, "pairs: chi-square {pairs_chi}");
    assert_eq!(dice.thrown, N as u64);
}

#[test]
fn each_seat_seed_changes_the_dice() {
    let seed = counting_seed();
    let sequence = |white: &str, black: &str| -> Vec<u8> {
        let seeds = SeatSeeds::new(white, black).unwrap();
        (0..40).map(|n| die(&seed, &seeds, n)).collect()
    };
    let base = sequence("", "");
    assert_ne!(sequence("w", ""), base);
    assert_ne!(sequence("", "b"), base);
    // Seeds are length-prefixed: moving text from one to the other is
    // another pair of seeds.
    assert_ne!(sequence("ab", ""), sequence("a", "b"));
    // Another server seed, other dice.
    let other = ServerSeed([7; 32]);
    let seeds = SeatSeeds::default();
    let elsewhere: Vec<u8> = (0..40).map(|n| die(&other, &seeds, n)).collect();
    assert_ne!(elsewhere, base);
}

#[test]
fn a_record_verifies_and_a_tampered_die_or_seed_is_caught() {
    let mut dice = FairDice::new(SeatSeeds::new("w", "b").unwrap());
    let thrown: Vec<u8> = (0..100).map(|_| dice.next_die()).collect();
    let commitment = dice.server.commitment();
    let revealed = dice.server.to_hex();
    assert_eq!(verify(&commitment, &revealed, &dice.seeds, &thrown), Ok(()));

    let mut tampered = thrown.clone();
    tampered[37] = tampered[37] % 6 + 1;
    assert_eq!(
        verify(&commitment, &revealed, &dice.seeds, &tampered),
        Err(VerifyError::Die {
            n: 37,
            recorded: tampered[37],
            derived: thrown[37]
        })
    );
    let other = ServerSeed::generate().to_hex();
    assert!(matches!(
        verify(&commitment, &other, &dice.seeds, &thrown),
        Err(VerifyError::Commitment { .. })
    ));
    let wrong_seeds = SeatSeeds::new("w", "not b").unwrap();
    assert!(matches!(
        verify(&commitment, &revealed, &wrong_seeds, &thrown),
        Err(VerifyError::Die { .. })
    ));
    assert_eq!(
        verify(&commitment, "xyz", &dice.seeds, &thrown),
        Err(VerifyError::BadSeed)
    );
}

#[test]
fn the_debug_form_of_a_seed_never_shows_it() {
    let seed = counting_seed();
    let shown = format!(
        "{seed:?} {:?}",
        FairDice {
            server: seed,
            seeds: SeatSeeds::default(),
            thrown: 0
        }
    );
    assert!(!shown.contains(&seed.to_hex()), "{shown}");
    assert!(shown.contains(&seed.commitment()));
}

#[test]
fn a_seat_seed_longer_than_the_limit_is_refused() {
    let long = "x".repeat(MAX_SEAT_SEED_BYTES + 1);
    assert_eq!(
        SeatSeeds::new(&long, ""),
        Err(SeedError::TooLong(Seat::White))
    );
    assert_eq!(
        SeatSeeds::new("", &long),
        Err(SeedError::TooLong(Seat::Black))
    );
    assert!(SeatSeeds::new(&long[1..], &long[1..]).is_ok());
}

/// A seed given with a later roll applies from the next die: the dice
/// before it are the ones without it, the dice after it the ones with it
/// (the known answers of the first test, spliced at die 10).
#[test]
fn a_seat_seed_given_later_applies_from_the_next_die() {
    let mut dice = FairDice {
        server: counting_seed(),
        seeds: SeatSeeds::default(),
        thrown: 0,
    };
    let mut thrown: Vec<u8> = (0..10).map(|_| dice.next_die()).collect();
    dice.give_seed(Seat::White, "alice's seed").unwrap();
    assert_eq!(dice.seeds.white.from, 10);
    thrown.extend((0..10).map(|_| dice.next_die()));
    assert_eq!(
        thrown,
        [4, 1, 3, 2, 1, 6, 2, 4, 2, 1, 3, 3, 2, 5, 6, 5, 2, 1, 2, 5]
    );
    let commitment = dice.server.commitment();
    let revealed = dice.server.to_hex();
    assert_eq!(verify(&commitment, &revealed, &dice.seeds, &thrown), Ok(()));
    // The same seed said to apply from the start does not verify.
    let from_start = SeatSeeds::new("alice's seed", "").unwrap();
    assert!(verify(&commitment, &revealed, &from_start, &thrown).is_err());
}

#[test]
fn a_seat_gives_one_seed_at_most() {
    let mut dice = FairDice::new(SeatSeeds::new("", "b").unwrap());
    assert_eq!(
        dice.give_seed(Seat::Black, "again"),
        Err(SeedError::AlreadyGiven(Seat::Black))
    );
    // An empty seed is none: the seat may still give one.
    dice.give_seed(Seat::White, "").unwrap();
    dice.next_die();
    dice.give_seed(Seat::White, "w").unwrap();
    assert_eq!(
        dice.seeds.white,
        SeatSeed {
            seed: "w".into(),
            from: 1
        }
    );
    assert_eq!(
        dice.give_seed(Seat::White, "w2"),
        Err(SeedError::AlreadyGiven(Seat::White))
    );
}
