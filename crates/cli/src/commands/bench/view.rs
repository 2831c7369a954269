//! The part of a `Game` answer that `bench load` reads, and a client that
//! decodes Roll and Move answers into it.
//!
//! `bench load` shares the machine's cores with the server it measures, so
//! what it spends decoding answers is taken from the server. A full
//! `Game` answer in a move phase holds every legal play with its checker
//! moves, notation and result Position ID: decoding all of it costs the
//! client more than the rest of a call. [`GameView`] keeps only the fields
//! the load loop reads, with the proto's own tags; protobuf decoders skip
//! the others without building them, as a client generated from a subset
//! of the proto would. The server's work and the bytes on the wire are the
//! same either way.

use bg_api::v1 as pb;
use tonic::client::Grpc;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;

/// `backgammon.v1.Game`, the fields `bench load` reads (tags as in the
/// proto).
#[derive(Clone, PartialEq, prost::Message)]
pub struct GameView {
    #[prost(string, tag = "1")]
    pub game_id: String,
    #[prost(uint64, tag = "2")]
    pub version: u64,
    #[prost(enumeration = "pb::Phase", tag = "9")]
    pub phase: i32,
    #[prost(enumeration = "pb::Seat", tag = "10")]
    pub to_act: i32,
    #[prost(message, repeated, tag = "19")]
    pub legal_plays: Vec<PlayView>,
}

/// `backgammon.v1.Play`, its notation only.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PlayView {
    #[prost(string, tag = "2")]
    pub notation: String,
}

impl From<pb::Game> for GameView {
    fn from(game: pb::Game) -> Self {
        GameView {
            game_id: game.game_id,
            version: game.version,
            phase: game.phase,
            to_act: game.to_act,
            legal_plays: game
                .legal_plays
                .into_iter()
                .map(|play| PlayView {
                    notation: play.notation,
                })
                .collect(),
        }
    }
}

impl GameView {
    /// The fields of `Game` the view reads, for a request's `read_mask`:
    /// the server then builds and sends only them.
    pub fn read_mask() -> prost_types::FieldMask {
        prost_types::FieldMask {
            paths: [
                "game_id",
                "version",
                "phase",
                "to_act",
                "legal_plays.notation",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

/// Roll and Move calls of `backgammon.v1.GameService`, answered as
/// [`GameView`]s.
#[derive(Clone)]
pub struct TurnClient {
    grpc: Grpc<Channel>,
}

impl TurnClient {
    pub fn new(channel: Channel) -> Self {
        TurnClient {
            grpc: Grpc::new(channel),
        }
    }

    pub async fn roll(
        &mut self,
        request: Request<pb::RollRequest>,
    ) -> Result<Response<GameView>, Status> {
        self.call(request, "/backgammon.v1.GameService/Roll").await
    }

    pub async fn play(
        &mut self,
        request: Request<pb::MoveRequest>,
    ) -> Result<Response<GameView>, Status> {
        self.call(request, "/backgammon.v1.GameService/Move").await
    }

    async fn call<M>(
        &mut self,
        request: Request<M>,
        path: &'static str,
    ) -> Result<Response<GameView>, Status>
    where
        M: prost::Message + Send + Sync + 'static,
    {
        self.grpc
            .ready()
            .await
            .map_err(|e| Status::unavailable(format!("service not ready: {e}")))?;
        let codec = ProstCodec::<M, GameView>::default();
        self.grpc
            .unary(request, PathAndQuery::from_static(path), codec)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// An answer with fields the view skips set, and with values that all
    /// differ (a double offered, so the seat on turn and the seat to act
    /// differ too), so that a tag in [`GameView`] that differs from the
    /// proto's fails.
    fn full_game() -> pb::Game {
        let play = |notation: &str| pb::Play {
            moves: vec![pb::CheckerMove { from: 13, to: 7 }],
            notation: notation.into(),
            result_position_id: "4HPwATDgc/ABMA".into(),
        };
        pb::Game {
            game_id: "0b7e5c1e-9f0e-4d6e-a1d2-3c4b5a697887".into(),
            version: 41,
            variant: "standard".into(),
            variant_version: "1.0.0".into(),
            turn: pb::Seat::White as i32,
            phase: pb::Phase::CubeOffered as i32,
            to_act: pb::Seat::Black as i32,
            dice: Some(pb::Dice { die1: 6, die2: 1 }),
            game_number: 5,
            position_id: "4HPwATDgc/ABMA".into(),
            legal_plays: vec![play("13/7 8/7"), play("24/18 6/5")],
            match_id: "cAkAAAAAAAAA".into(),
            xgid: "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10".into(),
            ..Default::default()
        }
    }

    #[test]
    fn view_of_an_answer_keeps_the_fields_bench_load_reads() {
        let game = full_game();
        let view = GameView::decode(game.encode_to_vec().as_slice()).unwrap();
        assert_eq!(view, GameView::from(game));
        assert_eq!(view.legal_plays[1].notation, "24/18 6/5");
        assert_eq!(view.phase, pb::Phase::CubeOffered as i32);
        assert_eq!(view.to_act, pb::Seat::Black as i32);
    }

    /// The read mask names each field the view decodes, by the name the
    /// proto gives its tag, and nothing else.
    #[test]
    fn the_read_mask_names_the_fields_the_view_decodes() {
        let set =
            prost_types::FileDescriptorSet::decode(pb::FILE_DESCRIPTOR_SET).expect("descriptor");
        let message = |name: &str| {
            set.file
                .iter()
                .flat_map(|f| &f.message_type)
                .find(|m| m.name() == name)
                .expect("message")
                .clone()
        };
        let name_of = |message: &prost_types::DescriptorProto, tag: i32| {
            message
                .field
                .iter()
                .find(|f| f.number() == tag)
                .expect("field")
                .name()
                .to_string()
        };
        let (game, play) = (message("Game"), message("Play"));
        let view_tags = [1, 2, 9, 10];
        let mut expected: Vec<String> = view_tags.iter().map(|&t| name_of(&game, t)).collect();
        expected.push(format!("{}.{}", name_of(&game, 19), name_of(&play, 2)));
        assert_eq!(GameView::read_mask().paths, expected);
    }
}
