//! `bgctl plays` for long nardy and Fevga (offline, through the plugins
//! loaded from their files), on worked examples of docs/nardy-fevga.md:
//! the line format of the other variants (Position IDs, each side in its
//! own numbering), so that an independent enumerator can be compared.

use bg_engine::{Board, Geometry, Seat, position_id};

fn plays(variant: &str, lib: &str, corpus: &str) -> String {
    bg_tests::bgctl_offline(
        env!("CARGO_BIN_EXE_bgctl").as_ref(),
        "plays",
        variant,
        lib,
        corpus,
    )
}

/// White to move; black's checkers given in white's numbering, as the
/// worked examples give them.
fn id(white: &[(u8, u8)], black_in_white_numbering: &[(u8, u8)]) -> String {
    let black: Vec<(u8, u8)> = black_in_white_numbering
        .iter()
        .map(|&(p, n)| (Geometry::SameWay.facing(p), n))
        .collect();
    position_id::encode(&Board::from_points(white, &black), Seat::White)
}

/// The number of legal plays of each line.
fn counts(output: &str) -> Vec<usize> {
    output
        .lines()
        .map(|l| l.split_whitespace().nth(3).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn bgctl_plays_lists_the_long_nardy_worked_examples_plays() {
    let corpus = format!(
        "{} 6 5\n{} 3 3\n{} 5 1\n{} 3 3\n",
        id(&[(24, 15)], &[(12, 15)]),
        id(&[(24, 15)], &[(12, 15)]),
        id(
            &[(24, 10), (23, 1), (22, 1), (21, 1), (20, 1), (15, 1)],
            &[(12, 13), (9, 1), (5, 1)]
        ),
        id(
            &[(24, 9), (23, 1), (22, 1), (8, 2), (2, 1), (1, 1)],
            &[(12, 14), (10, 1)]
        ),
    );
    let out = plays("long_nardy", "bg_long_nardy", &corpus);
    // LN1, LN4, LN9, LN11.
    assert_eq!(counts(&out), [1, 2, 29, 35], "{out}");
    // LN1's one play, 24/13: the result's ID, as `plays` prints it.
    let ln1 = id(&[(24, 14), (13, 1)], &[(12, 15)]);
    assert!(out.lines().next().unwrap().ends_with(&ln1), "{out}");
}

#[test]
fn bgctl_plays_lists_the_fevga_worked_examples_plays() {
    let corpus = format!(
        "{} 6 6\n{} 5 5\n{} 2 1\n",
        id(&[(24, 15)], &[(12, 15)]),
        id(&[(24, 15)], &[(12, 15)]),
        id(
            &[
                (24, 5),
                (8, 1),
                (7, 1),
                (6, 1),
                (5, 1),
                (4, 1),
                (3, 1),
                (2, 4)
            ],
            &[(9, 15)]
        ),
    );
    let out = plays("fevga", "bg_fevga", &corpus);
    // FV1, FV2, FV11.
    assert_eq!(counts(&out), [1, 2, 43], "{out}");
}
