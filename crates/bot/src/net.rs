//! The evaluator: one hidden layer, sigmoid units, five outputs.
//!
//! The outputs are the probabilities, for the side that just moved, of
//! winning, winning a gammon or more, winning a backgammon, losing a
//! gammon or more and losing a backgammon (gnubg's five outputs). Inputs
//! are sparse (most units are 0), which the forward pass and the update
//! use.

use bg_engine::Seat;
use bg_variant_api::Outcome;
use rand::Rng;

use crate::encode::{BOARD_INPUTS, INPUTS, PINNED_INPUTS};

/// The net's outputs.
pub const OUTPUTS: usize = 5;

/// Output indices.
pub const WIN: usize = 0;
pub const WIN_GAMMON: usize = 1;
pub const WIN_BACKGAMMON: usize = 2;
pub const LOSE_GAMMON: usize = 3;
pub const LOSE_BACKGAMMON: usize = 4;

/// A net and its weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Net {
    hidden: usize,
    /// The input weights, `INPUTS` rows of `hidden` (one row per input:
    /// the pass over the sparse inputs reads one row per input that is
    /// not 0); files keep them the other way round (see `to_bytes`).
    w1: Vec<f32>,
    b1: Vec<f32>,
    /// `OUTPUTS` rows of `hidden` weights, then `OUTPUTS` biases.
    w2: Vec<f32>,
    b2: Vec<f32>,
}

/// What a forward pass leaves for the update.
pub struct Activations {
    hidden: Vec<f32>,
    pub outputs: [f32; OUTPUTS],
}

/// The file formats, each with the weights of the inputs up to its end:
/// 1 the board's, 2 the pins' too, 3 the scoreboard's too.
const FORMATS: [(&[u8; 6], usize); 3] = [
    (b"BGNET1", BOARD_INPUTS),
    (b"BGNET2", PINNED_INPUTS),
    (b"BGNET3", INPUTS),
];

/// `hidden` units' input weights, as read (each unit's first inputs, as
/// many as its format has), with every input: the weights of the inputs
/// a format does not have are 0.
fn pad(by_unit: &[f32], hidden: usize) -> Vec<f32> {
    let given = by_unit.len() / hidden.max(1);
    if given == INPUTS {
        return by_unit.to_vec();
    }
    by_unit
        .chunks(given.max(1))
        .flat_map(|unit| {
            unit.iter()
                .copied()
                .chain(std::iter::repeat_n(0.0, INPUTS - given))
        })
        .collect()
}

/// `m`, `rows` rows of `columns`, as `columns` rows of `rows`.
fn transpose(m: &[f32], rows: usize, columns: usize) -> Vec<f32> {
    let mut t = vec![0.0; m.len()];
    for r in 0..rows {
        for c in 0..columns {
            t[c * rows + r] = m[r * columns + c];
        }
    }
    t
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Cubeless money equity of outputs: +1 a single win, +2 a gammon, +3 a
/// backgammon, and the same lost.
pub fn equity(o: &[f32; OUTPUTS]) -> f32 {
    2.0 * o[WIN] - 1.0 + o[WIN_GAMMON] - o[LOSE_GAMMON] + o[WIN_BACKGAMMON] - o[LOSE_BACKGAMMON]
}

/// The same outputs from the other side's point of view.
pub fn flip(o: &[f32; OUTPUTS]) -> [f32; OUTPUTS] {
    [
        1.0 - o[WIN],
        o[LOSE_GAMMON],
        o[LOSE_BACKGAMMON],
        o[WIN_GAMMON],
        o[WIN_BACKGAMMON],
    ]
}

impl Net {
    /// A net of `hidden` units with small random weights.
    pub fn new(hidden: usize, rng: &mut impl Rng) -> Net {
        let mut weights =
            |n: usize| -> Vec<f32> { (0..n).map(|_| rng.random_range(-0.1..0.1)).collect() };
        // The pin inputs' weights start at 0: a net of a variant without
        // pins keeps them so (and is written in format 1).
        let by_unit = pad(&weights(hidden * BOARD_INPUTS), hidden);
        Net {
            hidden,
            w1: transpose(&by_unit, hidden, INPUTS),
            b1: weights(hidden),
            w2: weights(OUTPUTS * hidden),
            b2: weights(OUTPUTS),
        }
    }

    /// The outputs for `inputs` (what [`forward`](Self::forward) gives,
    /// without keeping the hidden layer: the players' hot path).
    pub fn outputs(&self, inputs: &[f32; INPUTS]) -> [f32; OUTPUTS] {
        thread_local! {
            static HIDDEN: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        HIDDEN.with_borrow_mut(|hidden| {
            hidden.clear();
            hidden.extend_from_slice(&self.b1);
            self.hidden_layer(inputs, hidden);
            self.output_layer(hidden)
        })
    }

    /// Adds the inputs' weighted sums to `hidden` (holding the biases),
    /// then squashes them.
    fn hidden_layer(&self, inputs: &[f32; INPUTS], hidden: &mut [f32]) {
        for (i, &x) in inputs.iter().enumerate() {
            if x != 0.0 {
                let row = &self.w1[i * self.hidden..(i + 1) * self.hidden];
                for (h, &w) in hidden.iter_mut().zip(row) {
                    *h += w * x;
                }
            }
        }
        for h in hidden.iter_mut() {
            *h = sigmoid(*h);
        }
    }

    fn output_layer(&self, hidden: &[f32]) -> [f32; OUTPUTS] {
        let mut outputs = [0.0; OUTPUTS];
        for (k, out) in outputs.iter_mut().enumerate() {
            let row = &self.w2[k * self.hidden..(k + 1) * self.hidden];
            let sum: f32 = row.iter().zip(hidden).map(|(w, h)| w * h).sum();
            *out = sigmoid(sum + self.b2[k]);
        }
        outputs
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The outputs for `inputs`, with what the update needs.
    pub fn forward(&self, inputs: &[f32; INPUTS]) -> Activations {
        let mut hidden = self.b1.clone();
        self.hidden_layer(inputs, &mut hidden);
        let outputs = self.output_layer(&hidden);
        Activations { hidden, outputs }
    }

    /// One gradient step of size `alpha` moving the outputs for `inputs`
    /// (whose forward pass is `a`) toward `target` (squared error).
    pub fn learn(
        &mut self,
        inputs: &[f32; INPUTS],
        a: &Activations,
        target: &[f32; OUTPUTS],
        alpha: f32,
    ) {
        let mut delta_out = [0.0f32; OUTPUTS];
        for ((d, &o), &t) in delta_out.iter_mut().zip(&a.outputs).zip(target) {
            *d = (t - o) * o * (1.0 - o);
        }
        let mut delta_hidden = vec![0.0f32; self.hidden];
        for (j, dh) in delta_hidden.iter_mut().enumerate() {
            let h = a.hidden[j];
            let back: f32 = (0..OUTPUTS)
                .map(|k| delta_out[k] * self.w2[k * self.hidden + j])
                .sum();
            *dh = back * h * (1.0 - h);
        }
        for (k, &d) in delta_out.iter().enumerate() {
            let row = &mut self.w2[k * self.hidden..(k + 1) * self.hidden];
            for (w, &h) in row.iter_mut().zip(&a.hidden) {
                *w += alpha * d * h;
            }
            self.b2[k] += alpha * d;
        }
        for (i, &x) in inputs.iter().enumerate() {
            if x != 0.0 {
                let row = &mut self.w1[i * self.hidden..(i + 1) * self.hidden];
                for (w, dh) in row.iter_mut().zip(&delta_hidden) {
                    *w += alpha * dh * x;
                }
            }
        }
        for (b, dh) in self.b1.iter_mut().zip(&delta_hidden) {
            *b += alpha * dh;
        }
    }

    /// Whether the net reads a scoreboard (it learnt a weight for one of
    /// the score inputs): its positions are valued with their scores.
    pub fn reads_scores(&self) -> bool {
        self.w1[PINNED_INPUTS * self.hidden..]
            .iter()
            .any(|&w| w != 0.0)
    }

    /// The weights as bytes: the first format whose inputs cover every
    /// weight that is not 0 (`BGNET1`: the board inputs only, a net that
    /// never saw a pin or a score; `BGNET2`: with the pins; `BGNET3`:
    /// every input), the hidden size (u32), then every weight (f32), all
    /// little-endian: the input weights unit by unit (`hidden` rows of the
    /// format's inputs), the hidden biases, the output weights (`OUTPUTS`
    /// rows of `hidden`), the output biases.
    pub fn to_bytes(&self) -> Vec<u8> {
        let by_unit = transpose(&self.w1, INPUTS, self.hidden);
        let used = |end: usize| {
            by_unit
                .chunks(INPUTS)
                .all(|unit| unit[end..].iter().all(|&w| w == 0.0))
        };
        let (magic, inputs) = FORMATS
            .into_iter()
            .find(|&(_, end)| used(end))
            .unwrap_or(FORMATS[2]);
        let mut out = magic.to_vec();
        out.extend_from_slice(&(self.hidden as u32).to_le_bytes());
        let w1: Vec<f32> = by_unit
            .chunks(INPUTS)
            .flat_map(|unit| unit[..inputs].iter().copied())
            .collect();
        for w in w1.iter().chain(&self.b1).chain(&self.w2).chain(&self.b2) {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Weights read back; an error for bytes [`to_bytes`](Self::to_bytes)
    /// did not write.
    pub fn from_bytes(bytes: &[u8]) -> Result<Net, String> {
        let (inputs, rest) = FORMATS
            .iter()
            .find_map(|&(magic, inputs)| Some((inputs, bytes.strip_prefix(magic.as_slice())?)))
            .ok_or("not a net (no BGNET1, BGNET2 or BGNET3 header)")?;
        let (size, rest) = rest.split_first_chunk::<4>().ok_or("no hidden size")?;
        let hidden = u32::from_le_bytes(*size) as usize;
        if !(1..=4096).contains(&hidden) {
            return Err(format!("a hidden layer of {hidden} units"));
        }
        let count = hidden * inputs + hidden + OUTPUTS * hidden + OUTPUTS;
        if rest.len() != count * 4 {
            return Err(format!(
                "{} bytes of weights, not {}",
                rest.len(),
                count * 4
            ));
        }
        let mut all = rest
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let mut take = |n: usize| all.by_ref().take(n).collect::<Vec<f32>>();
        Ok(Net {
            hidden,
            w1: transpose(&pad(&take(hidden * inputs), hidden), hidden, INPUTS),
            b1: take(hidden),
            w2: take(OUTPUTS * hidden),
            b2: take(OUTPUTS),
        })
    }
}

/// What an outcome is worth in the net's outputs, for `me`.
pub fn target(outcome: &Outcome, me: Seat) -> [f32; OUTPUTS] {
    let level = outcome.level;
    let won = [
        1.0,
        f32::from(u8::from(level >= 2)),
        f32::from(u8::from(level >= 3)),
        0.0,
        0.0,
    ];
    match outcome.winner {
        Some(winner) if winner == me => won,
        Some(_) => flip(&won),
        // A draw: half a win, no gammons.
        None => [0.5, 0.0, 0.0, 0.0, 0.0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn weights_read_back_as_written_and_garbage_is_refused() {
        let net = Net::new(8, &mut rand::rngs::StdRng::seed_from_u64(1));
        assert_eq!(Net::from_bytes(&net.to_bytes()), Ok(net.clone()));
        let mut cut = net.to_bytes();
        cut.pop();
        assert!(Net::from_bytes(&cut).is_err());
        assert!(Net::from_bytes(b"nonsense").is_err());
    }

    /// A net that never saw a pin is written in format 1, byte for byte
    /// as before pins were inputs (the committed standard net); one that
    /// learnt a pin weight, in format 2.
    #[test]
    fn a_net_without_pin_weights_keeps_format_1_and_one_with_them_format_2() {
        let committed = include_bytes!("../weights/standard.bgnet");
        let net = Net::from_bytes(committed).unwrap();
        assert_eq!(net.to_bytes(), committed.to_vec());
        assert!(!net.reads_scores());
        let mut pinned = net.clone();
        let mut inputs = [0.0; INPUTS];
        inputs[BOARD_INPUTS + 5] = 1.0;
        let a = pinned.forward(&inputs);
        pinned.learn(&inputs, &a, &[1.0, 0.0, 0.0, 0.0, 0.0], 0.1);
        let bytes = pinned.to_bytes();
        assert!(bytes.starts_with(b"BGNET2"));
        assert_eq!(Net::from_bytes(&bytes), Ok(pinned.clone()));
        assert!(!pinned.reads_scores());
        // A score learnt: format 3, and the net reads scores.
        let mut scored = pinned;
        let mut inputs = [0.0; INPUTS];
        inputs[PINNED_INPUTS + 2] = 0.5;
        let a = scored.forward(&inputs);
        scored.learn(&inputs, &a, &[1.0, 0.0, 0.0, 0.0, 0.0], 0.1);
        let bytes = scored.to_bytes();
        assert!(bytes.starts_with(b"BGNET3"));
        assert!(scored.reads_scores());
        assert_eq!(Net::from_bytes(&bytes), Ok(scored));
    }

    #[test]
    fn the_hot_path_gives_what_the_forward_pass_gives() {
        let net = Net::new(12, &mut rand::rngs::StdRng::seed_from_u64(3));
        let mut inputs = [0.0; INPUTS];
        inputs[7] = 1.0;
        inputs[150] = 0.5;
        assert_eq!(net.outputs(&inputs), net.forward(&inputs).outputs);
    }

    #[test]
    fn a_step_toward_a_target_moves_the_outputs_toward_it() {
        let mut net = Net::new(8, &mut rand::rngs::StdRng::seed_from_u64(2));
        let mut inputs = [0.0; INPUTS];
        inputs[3] = 1.0;
        inputs[100] = 0.5;
        let target = [1.0, 1.0, 0.0, 0.0, 0.0];
        let before = net.forward(&inputs);
        net.learn(&inputs, &before, &target, 0.5);
        let after = net.forward(&inputs);
        for (k, t) in target.iter().enumerate() {
            assert!(
                (t - after.outputs[k]).abs() < (t - before.outputs[k]).abs(),
                "output {k}"
            );
        }
    }
}
