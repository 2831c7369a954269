//! The bytes between the host and a worker process.
//!
//! Each message is a frame: its length (`u32`, little-endian) then its
//! bytes. The host sends the plugin library's bytes first, then one
//! [`Request`] per call; the worker answers the library with a hello (the
//! plugin's [`Identity`], or why it could not be loaded), then each request
//! with its [`Answer`]. Everything a worker sends is read with bounds
//! checked: a worker that sends garbage is faulty, never trusted.

use std::io::{Read, Write};

use bg_engine::{Board, Dice, LegalPlay, Move, Play};

use crate::call::{Answer, Identity, Request};

/// The largest frame either side accepts (a plugin library is the largest
/// thing sent: a debug build of one is tens of megabytes).
pub(crate) const MAX_FRAME: usize = 256 << 20;

/// Writes one frame, in one write when it is small (a pipe's writes of up
/// to 4 KiB are atomic, and each write is a system call).
pub(crate) fn write_frame(to: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    let len = u32::try_from(bytes.len())
        .ok()
        .filter(|&len| len as usize <= MAX_FRAME)
        .ok_or_else(|| std::io::Error::other("frame too large"))?;
    if bytes.len() <= 4096 {
        let mut frame = Vec::with_capacity(4 + bytes.len());
        frame.extend_from_slice(&len.to_le_bytes());
        frame.extend_from_slice(bytes);
        to.write_all(&frame)?;
    } else {
        to.write_all(&len.to_le_bytes())?;
        to.write_all(bytes)?;
    }
    to.flush()
}

/// Reads one frame; `None` at the end of the stream before a frame began.
pub(crate) fn read_frame(from: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match from.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(std::io::Error::other(format!("a frame of {len} bytes")));
    }
    let mut bytes = vec![0u8; len];
    from.read_exact(&mut bytes)?;
    Ok(Some(bytes))
}

/// A frame's length, if `bytes` begins with a whole length prefix.
pub(crate) fn frame_len(bytes: &[u8]) -> Option<usize> {
    let prefix: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    Some(u32::from_le_bytes(prefix) as usize)
}

/// Builds a message.
#[derive(Default)]
pub(crate) struct Out(pub Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
    }
    fn dice(&mut self, dice: Dice) {
        self.u8(dice.d1);
        self.u8(dice.d2);
    }
    fn board(&mut self, board: &Board) {
        for side in &board.checkers {
            self.0.extend_from_slice(side);
        }
        for pinned in board.pinned {
            self.u32(pinned);
        }
    }
    fn play(&mut self, play: &Play) {
        self.u8(play.len() as u8);
        for m in play.moves() {
            self.u8(m.from);
            self.u8(m.to);
        }
    }
}

/// Reads a message, every read bounds-checked.
pub(crate) struct In<'a>(&'a [u8]);

impl<'a> In<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> In<'a> {
        In(bytes)
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err(format!(
                "a message cut short ({} bytes left, {n} wanted)",
                self.0.len()
            ));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }
    fn u64(&mut self) -> Result<u64, String> {
        let lo = self.u32()? as u64;
        let hi = self.u32()? as u64;
        Ok(lo | hi << 32)
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let len = self.u32()? as usize;
        self.take(len)
    }
    fn string(&mut self) -> Result<String, String> {
        Ok(String::from_utf8_lossy(self.bytes()?).into_owned())
    }
    fn dice(&mut self) -> Result<Dice, String> {
        Ok(Dice {
            d1: self.u8()?,
            d2: self.u8()?,
        })
    }
    fn board(&mut self) -> Result<Board, String> {
        let mut board = Board::EMPTY;
        for side in &mut board.checkers {
            let len = side.len();
            side.copy_from_slice(self.take(len)?);
        }
        for pinned in &mut board.pinned {
            *pinned = self.u32()?;
        }
        Ok(board)
    }
    fn optional_board(&mut self) -> Result<Option<Board>, String> {
        match self.u8()? {
            0 => Ok(None),
            _ => Ok(Some(self.board()?)),
        }
    }
    fn play(&mut self) -> Result<Play, String> {
        let len = self.u8()? as usize;
        let mut moves = Vec::with_capacity(len.min(8));
        for _ in 0..len {
            moves.push(Move::new(self.u8()?, self.u8()?));
        }
        Play::from_moves(&moves).ok_or_else(|| format!("a play of {len} moves"))
    }
    fn end(&self) -> Result<(), String> {
        match self.0.len() {
            0 => Ok(()),
            n => Err(format!("{n} bytes left over at the end of a message")),
        }
    }
}

// Request kinds.
const INFO: u8 = 1;
const NEW_GAME: u8 = 2;
const SETUP_POSITION: u8 = 3;
const BOARD: u8 = 4;
const LEGAL_PLAYS: u8 = 5;
const APPLY_PLAY: u8 = 6;
const AFTER_ROLL: u8 = 7;
const DECIDE: u8 = 8;
const CONCEDE: u8 = 9;
const SCOREBOARD: u8 = 10;

/// A request's bytes.
pub(crate) fn request(request: &Request<'_>) -> Vec<u8> {
    let mut out = Out::default();
    match *request {
        Request::Info => out.u8(INFO),
        Request::NewGame { options } => {
            out.u8(NEW_GAME);
            out.bytes(options);
        }
        Request::SetupPosition { board, options } => {
            out.u8(SETUP_POSITION);
            out.board(board);
            out.bytes(options);
        }
        Request::Board { state } => {
            out.u8(BOARD);
            out.bytes(state);
        }
        Request::LegalPlays { state, seat, dice } => {
            out.u8(LEGAL_PLAYS);
            out.bytes(state);
            out.u8(seat);
            out.dice(dice);
        }
        Request::ApplyPlay {
            state,
            seat,
            dice,
            play,
        } => {
            out.u8(APPLY_PLAY);
            out.bytes(state);
            out.u8(seat);
            out.dice(dice);
            out.play(play);
        }
        Request::AfterRoll { state, seat, dice } => {
            out.u8(AFTER_ROLL);
            out.bytes(state);
            out.u8(seat);
            out.dice(dice);
        }
        Request::Decide {
            state,
            seat,
            choice,
        } => {
            out.u8(DECIDE);
            out.bytes(state);
            out.u8(seat);
            out.bytes(choice);
        }
        Request::Concede { state, loser } => {
            out.u8(CONCEDE);
            out.bytes(state);
            out.u8(loser);
        }
        Request::Scoreboard { state } => {
            out.u8(SCOREBOARD);
            out.bytes(state);
        }
    }
    out.0
}

/// A request read back, its inputs owned (the worker's side).
pub(crate) struct OwnedRequest {
    kind: u8,
    state: Vec<u8>,
    bytes: Vec<u8>,
    seat: u8,
    dice: Dice,
    board: Board,
    play: Play,
}

impl OwnedRequest {
    /// Reads a request the host sent.
    pub(crate) fn read(bytes: &[u8]) -> Result<OwnedRequest, String> {
        let mut input = In::new(bytes);
        let kind = input.u8()?;
        let mut request = OwnedRequest {
            kind,
            state: Vec::new(),
            bytes: Vec::new(),
            seat: 0,
            dice: Dice { d1: 1, d2: 1 },
            board: Board::EMPTY,
            play: Play::EMPTY,
        };
        match kind {
            INFO => {}
            NEW_GAME => request.bytes = input.bytes()?.to_vec(),
            SETUP_POSITION => {
                request.board = input.board()?;
                request.bytes = input.bytes()?.to_vec();
            }
            BOARD | SCOREBOARD => request.state = input.bytes()?.to_vec(),
            LEGAL_PLAYS | AFTER_ROLL => {
                request.state = input.bytes()?.to_vec();
                request.seat = input.u8()?;
                request.dice = input.dice()?;
            }
            APPLY_PLAY => {
                request.state = input.bytes()?.to_vec();
                request.seat = input.u8()?;
                request.dice = input.dice()?;
                request.play = input.play()?;
            }
            DECIDE => {
                request.state = input.bytes()?.to_vec();
                request.seat = input.u8()?;
                request.bytes = input.bytes()?.to_vec();
            }
            CONCEDE => {
                request.state = input.bytes()?.to_vec();
                request.seat = input.u8()?;
            }
            other => return Err(format!("unknown request kind {other}")),
        }
        input.end()?;
        Ok(request)
    }

    /// The request, borrowing these inputs.
    pub(crate) fn get(&self) -> Request<'_> {
        let (state, seat, dice) = (&self.state[..], self.seat, self.dice);
        match self.kind {
            INFO => Request::Info,
            NEW_GAME => Request::NewGame {
                options: &self.bytes,
            },
            SETUP_POSITION => Request::SetupPosition {
                board: &self.board,
                options: &self.bytes,
            },
            BOARD => Request::Board { state },
            LEGAL_PLAYS => Request::LegalPlays { state, seat, dice },
            APPLY_PLAY => Request::ApplyPlay {
                state,
                seat,
                dice,
                play: &self.play,
            },
            AFTER_ROLL => Request::AfterRoll { state, seat, dice },
            DECIDE => Request::Decide {
                state,
                seat,
                choice: &self.bytes,
            },
            CONCEDE => Request::Concede { state, loser: seat },
            _ => Request::Scoreboard { state },
        }
    }
}

/// An answer's bytes: the status and bytes; a board's board; legal plays.
pub(crate) fn answer(request: &Request<'_>, answer: &Answer, plays: &[LegalPlay]) -> Vec<u8> {
    let mut out = Out::default();
    out.u32(answer.status as u32);
    out.bytes(&answer.bytes);
    match request {
        Request::Board { .. } => out.board(&answer.board),
        Request::LegalPlays { .. } => {
            out.u32(plays.len() as u32);
            for lp in plays {
                out.play(&lp.play);
                out.board(&lp.result);
            }
        }
        _ if carries_state(request) => match &answer.next_board {
            Some(board) => {
                out.u8(1);
                out.board(board);
            }
            None => out.u8(0),
        },
        _ => {}
    }
    out.0
}

/// Whether a request's answer is a `GameSetup` or a `Transition`: a state,
/// whose board the worker sends along.
pub(crate) fn carries_state(request: &Request<'_>) -> bool {
    matches!(
        request,
        Request::NewGame { .. }
            | Request::SetupPosition { .. }
            | Request::ApplyPlay { .. }
            | Request::AfterRoll { .. }
            | Request::Decide { .. }
    )
}

/// Reads a worker's answer to `request`; the plays go into `plays`.
pub(crate) fn read_answer(
    request: &Request<'_>,
    bytes: &[u8],
    plays: &mut Vec<LegalPlay>,
) -> Result<Answer, String> {
    let mut input = In::new(bytes);
    let status = input.u32()? as i32;
    let message = input.bytes()?.to_vec();
    let mut answer = Answer::new(status, message);
    match request {
        Request::Board { .. } => answer.board = input.board()?,
        Request::LegalPlays { .. } => {
            let count = input.u32()? as usize;
            if count > crate::call::MAX_PLAYS {
                return Err(format!("{count} legal plays"));
            }
            plays.clear();
            for _ in 0..count {
                let play = input.play()?;
                let result = input.board()?;
                plays.push(LegalPlay { play, result });
            }
        }
        _ if carries_state(request) => answer.next_board = input.optional_board()?,
        _ => {}
    }
    input.end()?;
    Ok(answer)
}

// Hello kinds.
const LOADED: u8 = 0;
const REFUSED: u8 = 1;

/// The worker's first answer: the plugin it loaded, or why it could not.
pub(crate) fn hello(loaded: &Result<Identity, String>) -> Vec<u8> {
    let mut out = Out::default();
    match loaded {
        Ok(identity) => {
            out.u8(LOADED);
            out.bytes(identity.name.as_bytes());
            out.bytes(identity.version.as_bytes());
            out.bytes(identity.api_version.as_bytes());
            out.u64(identity.capabilities);
            out.u32(identity.flags);
            out.u8(u8::from(identity.has_scoreboard));
        }
        Err(why) => {
            out.u8(REFUSED);
            out.bytes(why.as_bytes());
        }
    }
    out.0
}

/// Reads a hello: `Err` if the worker sent garbage, `Ok(Err)` if it
/// could not load the plugin.
pub(crate) fn read_hello(bytes: &[u8]) -> Result<Result<Identity, String>, String> {
    let mut input = In::new(bytes);
    let hello = match input.u8()? {
        LOADED => Ok(Identity {
            name: input.string()?,
            version: input.string()?,
            api_version: input.string()?,
            capabilities: input.u64()?,
            flags: input.u32()?,
            has_scoreboard: input.u8()? != 0,
        }),
        REFUSED => Err(input.string()?),
        other => return Err(format!("unknown hello kind {other}")),
    };
    input.end()?;
    Ok(hello)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_plays() -> Vec<LegalPlay> {
        let play = Play::from_moves(&[Move::new(24, 18), Move::new(13, 10)]).unwrap();
        let mut result = Board::EMPTY;
        result.checkers[0][6] = 5;
        result.checkers[1][19] = 2;
        result.pinned = [7, 1 << 31];
        vec![
            LegalPlay { play, result },
            LegalPlay {
                play: Play::EMPTY,
                result: Board::EMPTY,
            },
        ]
    }

    #[test]
    fn every_request_reads_back_as_sent() {
        let board = sample_plays()[0].result;
        let play = sample_plays()[0].play;
        let dice = Dice { d1: 6, d2: 3 };
        let requests = [
            Request::Info,
            Request::NewGame { options: b"opts" },
            Request::SetupPosition {
                board: &board,
                options: b"o",
            },
            Request::Board { state: b"state" },
            Request::LegalPlays {
                state: b"s",
                seat: 1,
                dice,
            },
            Request::ApplyPlay {
                state: b"s",
                seat: 0,
                dice,
                play: &play,
            },
            Request::AfterRoll {
                state: b"s",
                seat: 1,
                dice,
            },
            Request::Decide {
                state: b"s",
                seat: 1,
                choice: b"stay",
            },
            Request::Concede {
                state: b"s",
                loser: 1,
            },
            Request::Scoreboard { state: b"s" },
        ];
        for sent in requests {
            let read = OwnedRequest::read(&request(&sent)).unwrap();
            assert_eq!(format!("{:?}", read.get()), format!("{sent:?}"));
        }
    }

    #[test]
    fn answers_read_back_with_their_board_and_plays() {
        let plays = sample_plays();
        let legal = Request::LegalPlays {
            state: b"s",
            seat: 0,
            dice: Dice { d1: 2, d2: 1 },
        };
        let sent = Answer::new(0, b"ok".to_vec());
        let mut read_plays = Vec::new();
        let read = read_answer(&legal, &answer(&legal, &sent, &plays), &mut read_plays).unwrap();
        assert_eq!((read.status, read.bytes), (0, b"ok".to_vec()));
        assert_eq!(read_plays, plays);

        let board = Request::Board { state: b"s" };
        let mut sent = Answer::new(3, b"bad".to_vec());
        sent.board = plays[0].result;
        let read = read_answer(&board, &answer(&board, &sent, &[]), &mut Vec::new()).unwrap();
        assert_eq!((read.status, read.board), (3, plays[0].result));

        // A transition's answer carries its state's board, or says it
        // does not.
        let moved = Request::AfterRoll {
            state: b"s",
            seat: 1,
            dice: Dice { d1: 5, d2: 5 },
        };
        let mut sent = Answer::new(0, b"transition".to_vec());
        for next_board in [Some(plays[0].result), None] {
            sent.next_board = next_board;
            let read = read_answer(&moved, &answer(&moved, &sent, &[]), &mut Vec::new()).unwrap();
            assert_eq!(read.next_board, next_board);
        }
    }

    #[test]
    fn garbage_from_a_worker_is_an_error_not_a_crash() {
        let legal = Request::LegalPlays {
            state: b"s",
            seat: 0,
            dice: Dice { d1: 2, d2: 1 },
        };
        let good = answer(&legal, &Answer::new(0, Vec::new()), &sample_plays());
        // Every truncation, and some noise, is refused.
        for cut in 0..good.len() {
            assert!(
                read_answer(&legal, &good[..cut], &mut Vec::new()).is_err(),
                "cut at {cut}"
            );
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(read_answer(&legal, &longer, &mut Vec::new()).is_err());
        let huge = [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        assert!(read_answer(&legal, &huge, &mut Vec::new()).is_err());
        let mut bad_play = good;
        bad_play[12] = 9; // the first play claims 9 moves
        assert!(read_answer(&legal, &bad_play, &mut Vec::new()).is_err());
        assert!(read_hello(&[7]).is_err());
    }

    #[test]
    fn a_hello_reads_back() {
        let identity = Identity {
            name: "standard".into(),
            version: "1.0".into(),
            api_version: "0.1.0".into(),
            capabilities: 5,
            flags: 3,
            has_scoreboard: true,
        };
        assert_eq!(
            read_hello(&hello(&Ok(identity.clone()))).unwrap(),
            Ok(identity)
        );
        assert_eq!(
            read_hello(&hello(&Err("no".into()))).unwrap(),
            Err("no".into())
        );
    }
}
