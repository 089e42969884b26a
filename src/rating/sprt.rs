//! The sequential probability ratio test (SPRT) over game pairs, as
//! fishtest and fastchess define it.
//!
//! Owns the generalized log-likelihood ratio (LLR) of a pentanomial count
//! under the normalized-Elo model (Michel Van den Bergh's maximum-likelihood
//! estimate for a given t-value) and under the logistic model (a given
//! expected score), and the bounds that decide H0 or H1. Pure arithmetic:
//! no records, no I/O, no formatting.

/// Normalized Elo per unit of t-value: 800 / ln 10.
const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// Replaces an empty pentanomial cell (fishtest's regularization), so that
/// every outcome keeps a positive probability.
const EMPTY_CELL: f64 = 1e-3;

/// How the Elo bounds of the hypotheses are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// Normalized Elo (the t-value of the pair score, scaled).
    Normalized,
    /// Logistic Elo (the expected score).
    Logistic,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Normalized => "normalized",
            Model::Logistic => "logistic",
        }
    }
}

/// What the test says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The LLR reached the lower bound: the first player is not `elo1`
    /// stronger.
    H0,
    /// The LLR reached the upper bound: the first player is at least
    /// `elo0` stronger.
    H1,
    Continue,
}

impl Decision {
    pub fn name(self) -> &'static str {
        match self {
            Decision::H0 => "H0",
            Decision::H1 => "H1",
            Decision::Continue => "continue",
        }
    }
}

/// The test's parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
    pub model: Model,
    /// Set when the pairs repeat openings (allowed only by the
    /// tournament file's `repeat-openings = true`): every verdict says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeated_openings: Option<RepeatedOpenings>,
}

/// An SPRT whose pairs do not each start from their own opening: its
/// pairs are not independent samples, and its verdict says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RepeatedOpenings {
    /// Distinct openings the tournament has.
    pub distinct: u64,
    /// Game pairs the test may play.
    pub pairs: u64,
}

impl RepeatedOpenings {
    /// The caveat every verdict carries.
    pub fn caveat(&self) -> String {
        format!(
            "openings repeat: {} distinct for {} pairs (repeat-openings = true)",
            self.distinct, self.pairs
        )
    }
}

impl Sprt {
    /// `ln(β / (1 − α))`: at or below it H0 is accepted.
    pub fn lower(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// `ln((1 − β) / α)`: at or above it H1 is accepted.
    pub fn upper(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The LLR of `penta` (pairs in which the first player scored 0, ½, 1,
    /// 1½, 2); 0 without pairs.
    pub fn llr(&self, penta: &[u64; 5]) -> f64 {
        match self.model {
            Model::Normalized => llr_normalized(self.elo0, self.elo1, penta),
            Model::Logistic => llr_logistic(self.elo0, self.elo1, penta),
        }
    }

    pub fn decide(&self, llr: f64) -> Decision {
        if llr >= self.upper() {
            Decision::H1
        } else if llr <= self.lower() {
            Decision::H0
        } else {
            Decision::Continue
        }
    }
}

/// The verdict a run reached, as it is kept beside the records (the
/// results folder's `sprt-verdict.json`): the pairs counted when the LLR
/// crossed a bound and how many games had been recorded then. Games that
/// were still running finish and are recorded, but the test is decided
/// where it crossed (a late game could pull the LLR back inside the
/// bounds); in a tournament played in shares, the first share to see the
/// crossing keeps its verdict and every share and reader shows that one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Verdict {
    /// Games recorded (every share's) when the test crossed its bound.
    pub games: usize,
    /// The pairs counted then, from the first player's view.
    pub pentanomial: [u64; 5],
}

/// A discrete distribution: (value, probability) pairs.
type Pdf = Vec<(f64, f64)>;

/// The regularized empirical distribution of the pair score per game
/// (0, ¼, ½, ¾, 1) and the number of pairs.
fn penta_pdf(penta: &[u64; 5]) -> (f64, Pdf) {
    let cells: Vec<f64> = penta
        .iter()
        .map(|&c| if c == 0 { EMPTY_CELL } else { c as f64 })
        .collect();
    let n: f64 = cells.iter().sum();
    let pdf = cells
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as f64 / 4.0, c / n))
        .collect();
    (n, pdf)
}

/// Mean and variance of `pdf`.
fn stats(pdf: &[(f64, f64)]) -> (f64, f64) {
    let mean: f64 = pdf.iter().map(|(a, p)| a * p).sum();
    let var = pdf.iter().map(|(a, p)| p * (a - mean).powi(2)).sum();
    (mean, var)
}

/// The `x` with `Σ pᵢ aᵢ / (1 + x aᵢ) = 0` on the interval where every
/// `1 + x aᵢ > 0` (the function decreases there), to within `tolerance`
/// (fastchess: 1e-3 for the logistic model, 1e-7 for the normalized one),
/// or `None` when the `aᵢ` do not change sign.
fn secular(pdf: &[(f64, f64)], tolerance: f64) -> Option<f64> {
    let v = pdf.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
    let w = pdf.iter().map(|x| x.0).fold(f64::NEG_INFINITY, f64::max);
    if v * w >= 0.0 {
        return None;
    }
    let f = |x: f64| -> f64 { pdf.iter().map(|(a, p)| p * a / (1.0 + x * a)).sum() };
    let (mut lo, mut hi) = (-1.0 / w, -1.0 / v);
    while hi - lo > 2.0 * tolerance {
        let mid = 0.5 * (lo + hi);
        let y = f(mid);
        if y == 0.0 {
            return Some(mid);
        } else if y > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

/// The distribution closest to `pdf` (maximum likelihood) with
/// expectation `s`.
fn mle_expected(pdf: &[(f64, f64)], s: f64) -> Pdf {
    let shifted: Pdf = pdf.iter().map(|&(a, p)| (a - s, p)).collect();
    match secular(&shifted, 1e-3) {
        Some(x) => pdf
            .iter()
            .map(|&(a, p)| (a, p / (1.0 + x * (a - s))))
            .collect(),
        None => pdf.to_vec(),
    }
}

/// The distribution closest to `pdf` (maximum likelihood) with t-value
/// `(μ − reference) / σ = t`, by Van den Bergh's fixed-point iteration
/// from the uniform distribution (at most 10 steps, as fastchess).
fn mle_t_value(pdf: &[(f64, f64)], reference: f64, t: f64) -> Pdf {
    let n = pdf.len() as f64;
    let mut mle: Pdf = pdf.iter().map(|&(a, _)| (a, 1.0 / n)).collect();
    for _ in 0..10 {
        let previous = mle.clone();
        let (mu, var) = stats(&mle);
        let sigma = var.sqrt();
        let shifted: Pdf = pdf
            .iter()
            .map(|&(a, p)| {
                let z = (mu - a) / sigma;
                (a - reference - t * sigma * (1.0 + z * z) / 2.0, p)
            })
            .collect();
        let Some(x) = secular(&shifted, 1e-7) else {
            return mle;
        };
        mle = pdf
            .iter()
            .zip(&shifted)
            .map(|(&(a, p), &(b, _))| (a, p / (1.0 + x * b)))
            .collect();
        let change = mle
            .iter()
            .zip(&previous)
            .fold(0.0f64, |m, (x, y)| m.max((x.1 - y.1).abs()));
        // fastchess's criterion; the published values depend on it.
        if change < 1e-4 {
            break;
        }
    }
    mle
}

/// `N · Σ p̂ᵢ (ln p1ᵢ − ln p0ᵢ)`.
fn llr_of(n: f64, pdf: &[(f64, f64)], pdf0: &[(f64, f64)], pdf1: &[(f64, f64)]) -> f64 {
    n * pdf
        .iter()
        .zip(pdf0.iter().zip(pdf1))
        .map(|(&(_, p), (&(_, p0), &(_, p1)))| p * (p1.ln() - p0.ln()))
        .sum::<f64>()
}

/// The LLR of H1 (normalized Elo `nelo1`) against H0 (`nelo0`).
pub fn llr_normalized(nelo0: f64, nelo1: f64, penta: &[u64; 5]) -> f64 {
    if penta.iter().sum::<u64>() == 0 {
        return 0.0;
    }
    // Over pairs, the t-value of a per-game normalized Elo is √2 times as
    // large (a pair is two games).
    let [t0, t1] = [nelo0, nelo1].map(|e| e / NELO_PER_T * std::f64::consts::SQRT_2);
    let (n, pdf) = penta_pdf(penta);
    let pdf0 = mle_t_value(&pdf, 0.5, t0);
    let pdf1 = mle_t_value(&pdf, 0.5, t1);
    llr_of(n, &pdf, &pdf0, &pdf1)
}

/// The LLR of H1 (logistic Elo `elo1`) against H0 (`elo0`).
pub fn llr_logistic(elo0: f64, elo1: f64, penta: &[u64; 5]) -> f64 {
    if penta.iter().sum::<u64>() == 0 {
        return 0.0;
    }
    let [s0, s1] = [elo0, elo1].map(score_of_elo);
    let (n, pdf) = penta_pdf(penta);
    let pdf0 = mle_expected(&pdf, s0);
    let pdf1 = mle_expected(&pdf, s1);
    llr_of(n, &pdf, &pdf0, &pdf1)
}

/// The expected score of a logistic Elo difference.
pub fn score_of_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 0.01, "{a} is not {b} ± 0.01");
    }

    #[test]
    fn published_reference_values() {
        close(
            llr_normalized(0.0, 2.0, &[365, 16618, 36229, 16974, 390]),
            2.25,
        );
        close(
            llr_normalized(-1.75, 0.25, &[127, 4883, 10712, 5150, 104]),
            3.01,
        );
        close(llr_normalized(0.0, 5.0, &[0, 0, 0, 0, 5550]), 111.82);
    }

    #[test]
    fn bounds_and_decisions() {
        let t = Sprt {
            elo0: 0.0,
            elo1: 5.0,
            alpha: 0.05,
            beta: 0.05,
            model: Model::Normalized,
            repeated_openings: None,
        };
        close(t.lower(), -2.94);
        close(t.upper(), 2.94);
        assert_eq!(t.decide(3.0), Decision::H1);
        assert_eq!(t.decide(-3.0), Decision::H0);
        assert_eq!(t.decide(0.0), Decision::Continue);
        assert_eq!(t.llr(&[0; 5]), 0.0);
    }

    #[test]
    fn the_sign_follows_the_evidence() {
        let strong = [10, 20, 40, 60, 30];
        let weak = [30, 60, 40, 20, 10];
        for model in [Model::Normalized, Model::Logistic] {
            let t = Sprt {
                elo0: 0.0,
                elo1: 20.0,
                alpha: 0.05,
                beta: 0.05,
                model,
                repeated_openings: None,
            };
            assert!(t.llr(&strong) > 0.0, "{model:?}");
            assert!(t.llr(&weak) < 0.0, "{model:?}");
        }
    }

    #[test]
    fn logistic_matches_the_gaussian_approximation() {
        // For small Elo bounds, the LLR is close to fishtest's
        // (s1 − s0)(2s − s0 − s1) / 2v · N.
        let penta = [365, 16618, 36229, 16974, 390];
        let (n, pdf) = penta_pdf(&penta);
        let (s, v) = stats(&pdf);
        let (s0, s1) = (score_of_elo(0.0), score_of_elo(2.0));
        let approx = n * (s1 - s0) * (2.0 * s - s0 - s1) / v / 2.0;
        let exact = llr_logistic(0.0, 2.0, &penta);
        assert!((exact - approx).abs() < 0.05, "{exact} vs {approx}");
    }
}
