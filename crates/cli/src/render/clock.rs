//! A match clock under the board: both seats' time as a clock shows it,
//! the running one counted down from the server's answer.

use bg_api::v1 as pb;

use super::seat_name;

use bg_board_svg::clock_time;

/// Both clocks under the board, as of `now`: the running seat's reserve
/// less what its turn has cost since the answer (`as_of`) once its delay
/// is spent, and the delay left.
pub(super) fn render_clock(clock: &pb::Clock, now: std::time::SystemTime) -> String {
    let ms_of = |t: &prost_types::Timestamp| {
        (t.seconds.max(0) as u64) * 1000 + (t.nanos.max(0) as u64) / 1_000_000
    };
    let now = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut shown = [clock.white_ms, clock.black_ms];
    let mut note = String::new();
    if let (Some(as_of), Some(deadline)) = (&clock.as_of, &clock.deadline) {
        let (as_of, deadline) = (ms_of(as_of), ms_of(deadline));
        let since = now.saturating_sub(as_of);
        let delay_left = clock.delay_left_ms.saturating_sub(since);
        let running = if clock.running == pb::Seat::White as i32 {
            0
        } else {
            1
        };
        shown[running] = shown[running]
            .saturating_sub(since.saturating_sub(clock.delay_left_ms))
            .min(deadline.saturating_sub(now));
        note = format!(", {}'s time runs", seat_name(clock.running));
        if delay_left > 0 {
            note.push_str(&format!(" (delay {} left)", clock_time(delay_left)));
        }
    }
    format!(
        "clock: white {}, black {}{note}\n",
        clock_time(shown[0]),
        clock_time(shown[1])
    )
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    #[test]
    fn the_running_clock_counts_down_after_the_delay() {
        let at = |ms: u64| prost_types::Timestamp {
            seconds: (ms / 1000) as i64,
            nanos: ((ms % 1000) * 1_000_000) as i32,
        };
        // Answered 2 s into black's turn: 10 s of delay left.
        let clock = pb::Clock {
            white_ms: 840_000,
            black_ms: 600_000,
            running: pb::Seat::Black as i32,
            running_since: Some(at(1_000_000)),
            deadline: Some(at(1_000_000 + 12_000 + 600_000)),
            settings: Some(pb::ClockSettings {
                delay_ms: 12_000,
                ..Default::default()
            }),
            delay_left_ms: 10_000,
            as_of: Some(at(1_002_000)),
        };
        let now = |ms: u64| std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
        assert_eq!(
            render_clock(&clock, now(1_005_000)),
            "clock: white 14:00, black 10:00, black's time runs (delay 0:07.0 left)\n"
        );
        assert_eq!(
            render_clock(&clock, now(1_072_000)),
            "clock: white 14:00, black 9:00, black's time runs\n"
        );
    }
}
