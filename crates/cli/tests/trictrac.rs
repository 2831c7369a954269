//! `bgctl plays` and `bgctl jans` for tric-trac, through the plugin loaded
//! from its file, on worked examples of docs/trictrac.md §6.

use bg_engine::{Board, Seat, position_id};
use bg_trictrac_rules::view::board_from_fields as board;

fn bgctl(command: &str, corpus: &str) -> String {
    bg_tests::bgctl_offline(
        env!("CARGO_BIN_EXE_bgctl").as_ref(),
        command,
        "trictrac",
        "bg_trictrac",
        corpus,
    )
}

/// T8 (Lepeintre ch. II): white's 6-5 scores 20 (hits and the corner).
fn t8() -> Board {
    board(
        &[(1, 9), (4, 1), (5, 1), (7, 1), (8, 1), (12, 2)],
        &[
            (24, 7),
            (23, 1),
            (22, 1),
            (21, 1),
            (20, 1),
            (19, 1),
            (18, 1),
            (17, 1),
            (16, 1),
        ],
    )
}

/// T14: the jan de six tables on the third roll only.
fn t14() -> Board {
    board(&[(1, 11), (2, 1), (5, 1), (6, 1), (7, 1)], &[(24, 15)])
}

/// T8 (Lepeintre ch. II): white's 6-5 scores 20 (hits and the corner);
/// T14: the jan de six tables on the third roll only; T15: nothing
/// playable gives the opponent 4.
#[test]
fn bgctl_jans_prints_each_rolls_points_and_jans() {
    let (t8, t14) = (t8(), t14());
    let t15 = board(&[(1, 15)], &[(3, 2), (5, 2), (7, 2), (24, 9)]);
    let id = |b: &Board| position_id::encode(b, Seat::White);
    let corpus = format!(
        "# worked examples\n{} 6 5 10\n{} 3 2 3\n{} 3 2 4\n{} 4 2 1\n",
        id(&t8),
        id(&t14),
        id(&t14),
        id(&t15)
    );
    let out = bgctl("jans", &corpus);
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 4, "{out}");
    // Fields: id, dice, roll, roller's points, opponent's points, jans.
    assert_eq!(&lines[0][1..6], ["6", "5", "10", "20", "0"], "{out}");
    assert!(lines[0].contains(&"corner_hit:roller:1:4"), "{out}");
    assert_eq!(&lines[1][3..], ["3", "4", "0", "six_tables:roller:1:4"]);
    assert_eq!(&lines[2][3..], ["4", "0", "0"]);
    assert_eq!(
        &lines[3][3..],
        ["1", "0", "4", "unplayable_number:opponent:2:4"]
    );
}

/// T19: with the petit jan full, 6-5 has one legal play (power is
/// forbidden, effect would break the jan): the corner is not taken.
#[test]
fn bgctl_plays_lists_tric_trac_plays_as_position_ids() {
    let t19 = board(
        &[
            (1, 2),
            (2, 2),
            (3, 2),
            (4, 2),
            (5, 2),
            (6, 2),
            (7, 2),
            (8, 1),
        ],
        &[
            (14, 2),
            (18, 2),
            (20, 2),
            (21, 2),
            (22, 2),
            (23, 2),
            (24, 3),
        ],
    );
    let after = board(
        &[
            (1, 2),
            (2, 2),
            (3, 2),
            (4, 2),
            (5, 2),
            (6, 2),
            (7, 2),
            (19, 1),
        ],
        &[
            (14, 2),
            (18, 2),
            (20, 2),
            (21, 2),
            (22, 2),
            (23, 2),
            (24, 3),
        ],
    );
    let id = position_id::encode(&t19, Seat::White);
    let out = bgctl("plays", &format!("{id} 6 5\n"));
    assert_eq!(
        out.trim_end(),
        format!("{id} 6 5 1 {}", position_id::encode(&after, Seat::White))
    );
}

/// `bgctl hint` for tric-trac (its net reads the scoreboard) takes the
/// lines `bgctl jans` takes, echoes each, and adds the chosen play's
/// result, one of those `bgctl plays` lists for the same line, and its
/// equity.
#[test]
fn bgctl_hint_chooses_one_of_the_legal_plays_of_each_jans_line() {
    let (t8, t14) = (t8(), t14());
    let id = |b: &Board| position_id::encode(b, Seat::White);
    let corpus = format!(
        "{} 6 5 10\n{} 3 2 3\n{} 5 5 1\n",
        id(&t8),
        id(&t14),
        id(&board(&[(1, 15)], &[(24, 15)]))
    );
    let hints = bgctl("hint", &corpus);
    let plays = bgctl("plays", &corpus);
    let (hints, plays): (Vec<&str>, Vec<&str>) = (hints.lines().collect(), plays.lines().collect());
    assert_eq!(hints.len(), 3, "{hints:?}");
    for ((hint, legal), line) in hints.iter().zip(&plays).zip(corpus.lines()) {
        let fields: Vec<&str> = hint.split_whitespace().collect();
        assert_eq!(fields.len(), 6, "{hint}");
        assert_eq!(fields[..4].join(" "), line, "the line is echoed");
        let results: Vec<&str> = legal.split_whitespace().skip(4).collect();
        assert!(results.contains(&fields[4]), "{hint} not among {legal}");
        let equity: f64 = fields[5].parse().unwrap();
        assert!((-4.0..=4.0).contains(&equity), "{hint}");
    }
}
