//! Maximum-weight matching in a general graph (Edmonds' blossom algorithm
//! with dual variables, O(n³)), with the optimal duals kept so that a
//! caller can check edges it left out of the graph.
//!
//! A port of Joris van Rantwijk's `mwmatching.py` (public domain,
//! <http://jorisvr.nl/article/maximum-matching>), itself after Z. Galil,
//! "Efficient algorithms for finding maximum matching in graphs", ACM
//! Computing Surveys 1986: same data layout (edge endpoints `2k`/`2k+1`,
//! vertices `0..n`, blossoms `n..2n`), same steps, in integers (weights
//! are doubled so that every dual stays an integer). The maximum-
//! cardinality mode is left out: callers who need a perfect matching give
//! every edge a large constant on top (see `schedule::swiss`).
//!
//! Owns the matching and its certificate; knows nothing of players or
//! scores. Pure: no I/O. Deterministic: the same edges in the same order
//! give the same matching.

/// No vertex, edge end or blossom.
const NONE: usize = usize::MAX;

/// A maximum-weight matching and the duals that prove it optimal.
#[derive(Clone, Debug)]
pub struct Solved {
    /// The partner of each vertex, if matched.
    pub mate: Vec<Option<usize>>,
    /// Vertex duals `0..n`, blossom duals `n..2n` (in doubled weights).
    dual: Vec<i64>,
    /// The blossom a vertex or blossom sits in directly (`NONE`: top).
    parent: Vec<usize>,
    /// The top-level blossom (or the vertex itself) of each vertex.
    top: Vec<usize>,
}

impl Solved {
    /// The reduced cost of an edge `(i, j)` of weight `w` when it is
    /// negative (the edge could improve the matching), else `None`.
    pub fn violation(&self, i: usize, j: usize, w: i64) -> Option<i64> {
        if self.dual[i] + self.dual[j] - 4 * w >= 0 {
            return None;
        }
        let r = self.reduced_cost(i, j, w);
        (r < 0).then_some(r)
    }

    /// The reduced cost of an edge `(i, j)` of weight `w` under the optimal
    /// duals: any edge, in the graph or not. The matching is also optimal
    /// in a graph with more edges if every added edge has a reduced cost
    /// of zero or more (LP duality for the matching polytope).
    pub fn reduced_cost(&self, i: usize, j: usize, w: i64) -> i64 {
        let mut s = self.dual[i] + self.dual[j] - 4 * w;
        if self.top[i] != self.top[j] {
            return s;
        }
        let chain = |mut b: usize| {
            let mut out = Vec::new();
            while self.parent[b] != NONE {
                b = self.parent[b];
                out.push(b);
            }
            out
        };
        let (ci, cj) = (chain(i), chain(j));
        // Blossoms nest: the common ones are a common tail of both chains.
        for (bi, bj) in ci.iter().rev().zip(cj.iter().rev()) {
            if bi != bj {
                break;
            }
            s += 2 * self.dual[*bi];
        }
        s
    }
}

/// The maximum-weight matching of the graph on vertices `0..n` with
/// `edges` `(i, j, weight)`, `i != j`, weights at least 0 and small enough
/// that four times their sum fits an `i64`.
pub fn max_weight_matching(n: usize, edges: &[(usize, usize, i64)]) -> Solved {
    let mut m = Blossom::new(n, edges);
    m.solve();
    m.solved()
}

struct Blossom {
    n: usize,
    /// (i, j, 2 × weight).
    edges: Vec<(usize, usize, i64)>,
    endpoint: Vec<usize>,
    neighbend: Vec<Vec<usize>>,
    mate: Vec<usize>,
    label: Vec<u8>,
    labelend: Vec<usize>,
    inblossom: Vec<usize>,
    blossomparent: Vec<usize>,
    blossomchilds: Vec<Vec<usize>>,
    blossombase: Vec<usize>,
    blossomendps: Vec<Vec<usize>>,
    bestedge: Vec<usize>,
    blossombestedges: Vec<Option<Vec<usize>>>,
    unusedblossoms: Vec<usize>,
    dualvar: Vec<i64>,
    allowedge: Vec<bool>,
    queue: Vec<usize>,
}

impl Blossom {
    fn new(n: usize, edges: &[(usize, usize, i64)]) -> Blossom {
        let edges: Vec<(usize, usize, i64)> =
            edges.iter().map(|&(i, j, w)| (i, j, 2 * w)).collect();
        let maxweight = edges.iter().map(|e| e.2).max().unwrap_or(0).max(0);
        let mut endpoint = Vec::with_capacity(2 * edges.len());
        let mut neighbend = vec![Vec::new(); n];
        for (k, &(i, j, _)) in edges.iter().enumerate() {
            endpoint.push(i);
            endpoint.push(j);
            neighbend[i].push(2 * k + 1);
            neighbend[j].push(2 * k);
        }
        let nedge = edges.len();
        Blossom {
            n,
            edges,
            endpoint,
            neighbend,
            mate: vec![NONE; n],
            label: vec![0; 2 * n],
            labelend: vec![NONE; 2 * n],
            inblossom: (0..n).collect(),
            blossomparent: vec![NONE; 2 * n],
            blossomchilds: vec![Vec::new(); 2 * n],
            blossombase: (0..n).chain(std::iter::repeat_n(NONE, n)).collect(),
            blossomendps: vec![Vec::new(); 2 * n],
            bestedge: vec![NONE; 2 * n],
            blossombestedges: vec![None; 2 * n],
            unusedblossoms: (n..2 * n).collect(),
            dualvar: std::iter::repeat_n(maxweight, n)
                .chain(std::iter::repeat_n(0, n))
                .collect(),
            allowedge: vec![false; nedge],
            queue: Vec::new(),
        }
    }

    fn solved(self) -> Solved {
        let mate = (0..self.n)
            .map(|v| (self.mate[v] != NONE).then(|| self.endpoint[self.mate[v]]))
            .collect();
        Solved {
            mate,
            dual: self.dualvar,
            parent: self.blossomparent,
            top: self.inblossom,
        }
    }

    fn slack(&self, k: usize) -> i64 {
        let (i, j, w) = self.edges[k];
        self.dualvar[i] + self.dualvar[j] - 2 * w
    }

    /// The vertices inside blossom `b` (or `b` itself, a vertex).
    fn leaves(&self, b: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![b];
        while let Some(t) = stack.pop() {
            if t < self.n {
                out.push(t);
            } else {
                stack.extend(self.blossomchilds[t].iter().rev());
            }
        }
        out
    }

    fn assign_label(&mut self, w: usize, t: u8, p: usize) {
        let mut w = w;
        let mut t = t;
        let mut p = p;
        loop {
            let b = self.inblossom[w];
            self.label[w] = t;
            self.label[b] = t;
            self.labelend[w] = p;
            self.labelend[b] = p;
            self.bestedge[w] = NONE;
            self.bestedge[b] = NONE;
            if t == 1 {
                let leaves = self.leaves(b);
                self.queue.extend(leaves);
                return;
            }
            let base = self.blossombase[b];
            let mb = self.mate[base];
            w = self.endpoint[mb];
            t = 1;
            p = mb ^ 1;
        }
    }

    /// The base of the blossom closed by the edge `v`–`w`, or `NONE` when
    /// that edge ends an augmenting path.
    fn scan_blossom(&mut self, v: usize, w: usize) -> usize {
        let (mut v, mut w) = (v, w);
        let mut path = Vec::new();
        let mut base = NONE;
        while v != NONE || w != NONE {
            let mut b = self.inblossom[v];
            if self.label[b] & 4 != 0 {
                base = self.blossombase[b];
                break;
            }
            path.push(b);
            self.label[b] = 5;
            if self.labelend[b] == NONE {
                v = NONE;
            } else {
                v = self.endpoint[self.labelend[b]];
                b = self.inblossom[v];
                v = self.endpoint[self.labelend[b]];
            }
            if w != NONE {
                std::mem::swap(&mut v, &mut w);
            }
        }
        for b in path {
            self.label[b] = 1;
        }
        base
    }

    fn add_blossom(&mut self, base: usize, k: usize) {
        let (mut v, mut w, _) = self.edges[k];
        let bb = self.inblossom[base];
        let mut bv = self.inblossom[v];
        let mut bw = self.inblossom[w];
        let b = self.unusedblossoms.pop().expect("a free blossom slot");
        self.blossombase[b] = base;
        self.blossomparent[b] = NONE;
        self.blossomparent[bb] = b;
        let mut path = Vec::new();
        let mut endps = Vec::new();
        while bv != bb {
            self.blossomparent[bv] = b;
            path.push(bv);
            endps.push(self.labelend[bv]);
            v = self.endpoint[self.labelend[bv]];
            bv = self.inblossom[v];
        }
        path.push(bb);
        path.reverse();
        endps.reverse();
        endps.push(2 * k);
        while bw != bb {
            self.blossomparent[bw] = b;
            path.push(bw);
            endps.push(self.labelend[bw] ^ 1);
            w = self.endpoint[self.labelend[bw]];
            bw = self.inblossom[w];
        }
        self.label[b] = 1;
        self.labelend[b] = self.labelend[bb];
        self.dualvar[b] = 0;
        for v in self.leaves_of(&path) {
            if self.label[self.inblossom[v]] == 2 {
                self.queue.push(v);
            }
            self.inblossom[v] = b;
        }
        let mut bestedgeto = vec![NONE; 2 * self.n];
        for &bv in &path {
            let lists: Vec<Vec<usize>> = match self.blossombestedges[bv].take() {
                Some(list) => vec![list],
                None => self
                    .leaves(bv)
                    .into_iter()
                    .map(|v| self.neighbend[v].iter().map(|p| p / 2).collect())
                    .collect(),
            };
            for list in lists {
                for k in list {
                    let (mut i, mut j, _) = self.edges[k];
                    if self.inblossom[j] == b {
                        std::mem::swap(&mut i, &mut j);
                    }
                    let _ = i;
                    let bj = self.inblossom[j];
                    if bj != b
                        && self.label[bj] == 1
                        && (bestedgeto[bj] == NONE || self.slack(k) < self.slack(bestedgeto[bj]))
                    {
                        bestedgeto[bj] = k;
                    }
                }
            }
            self.bestedge[bv] = NONE;
        }
        let best: Vec<usize> = bestedgeto.into_iter().filter(|&k| k != NONE).collect();
        self.bestedge[b] = NONE;
        for &k in &best {
            if self.bestedge[b] == NONE || self.slack(k) < self.slack(self.bestedge[b]) {
                self.bestedge[b] = k;
            }
        }
        self.blossombestedges[b] = Some(best);
        self.blossomchilds[b] = path;
        self.blossomendps[b] = endps;
    }

    fn leaves_of(&self, children: &[usize]) -> Vec<usize> {
        children.iter().flat_map(|&c| self.leaves(c)).collect()
    }

    /// Index arithmetic of a blossom's cycle: position `j` may be negative
    /// (counted from the end), as in the Python original.
    fn at(list: &[usize], j: isize) -> usize {
        let len = list.len() as isize;
        list[j.rem_euclid(len) as usize]
    }

    fn expand_blossom(&mut self, b: usize, endstage: bool) {
        let childs = self.blossomchilds[b].clone();
        for &s in &childs {
            self.blossomparent[s] = NONE;
            if s < self.n {
                self.inblossom[s] = s;
            } else if endstage && self.dualvar[s] == 0 {
                self.expand_blossom(s, endstage);
            } else {
                for v in self.leaves(s) {
                    self.inblossom[v] = s;
                }
            }
        }
        if !endstage && self.label[b] == 2 {
            let endps = self.blossomendps[b].clone();
            let entrychild = self.inblossom[self.endpoint[self.labelend[b] ^ 1]];
            let mut j = childs
                .iter()
                .position(|&c| c == entrychild)
                .expect("entry child") as isize;
            let (jstep, endptrick): (isize, usize) = if j & 1 == 1 {
                j -= childs.len() as isize;
                (1, 0)
            } else {
                (-1, 1)
            };
            let mut p = self.labelend[b];
            while j != 0 {
                self.label[self.endpoint[p ^ 1]] = 0;
                let e = Self::at(&endps, j - endptrick as isize);
                self.label[self.endpoint[e ^ endptrick ^ 1]] = 0;
                self.assign_label(self.endpoint[p ^ 1], 2, p);
                self.allowedge[e / 2] = true;
                j += jstep;
                p = Self::at(&endps, j - endptrick as isize) ^ endptrick;
                self.allowedge[p / 2] = true;
                j += jstep;
            }
            let bv = Self::at(&childs, j);
            let q = self.endpoint[p ^ 1];
            self.label[q] = 2;
            self.label[bv] = 2;
            self.labelend[q] = p;
            self.labelend[bv] = p;
            self.bestedge[bv] = NONE;
            j += jstep;
            while Self::at(&childs, j) != entrychild {
                let bv = Self::at(&childs, j);
                if self.label[bv] == 1 {
                    j += jstep;
                    continue;
                }
                let labelled = self.leaves(bv).into_iter().find(|&v| self.label[v] != 0);
                if let Some(v) = labelled {
                    self.label[v] = 0;
                    let mb = self.mate[self.blossombase[bv]];
                    self.label[self.endpoint[mb]] = 0;
                    self.assign_label(v, 2, self.labelend[v]);
                }
                j += jstep;
            }
        }
        self.label[b] = u8::MAX;
        self.labelend[b] = NONE;
        self.blossomchilds[b] = Vec::new();
        self.blossomendps[b] = Vec::new();
        self.blossombase[b] = NONE;
        self.blossombestedges[b] = None;
        self.bestedge[b] = NONE;
        self.unusedblossoms.push(b);
    }

    fn augment_blossom(&mut self, b: usize, v: usize) {
        let mut t = v;
        while self.blossomparent[t] != b {
            t = self.blossomparent[t];
        }
        if t >= self.n {
            self.augment_blossom(t, v);
        }
        let childs = self.blossomchilds[b].clone();
        let endps = self.blossomendps[b].clone();
        let i = childs.iter().position(|&c| c == t).expect("child");
        let mut j = i as isize;
        let (jstep, endptrick): (isize, usize) = if i & 1 == 1 {
            j -= childs.len() as isize;
            (1, 0)
        } else {
            (-1, 1)
        };
        while j != 0 {
            j += jstep;
            let t = Self::at(&childs, j);
            let p = Self::at(&endps, j - endptrick as isize) ^ endptrick;
            if t >= self.n {
                self.augment_blossom(t, self.endpoint[p]);
            }
            j += jstep;
            let t = Self::at(&childs, j);
            if t >= self.n {
                self.augment_blossom(t, self.endpoint[p ^ 1]);
            }
            self.mate[self.endpoint[p]] = p ^ 1;
            self.mate[self.endpoint[p ^ 1]] = p;
        }
        self.blossomchilds[b].rotate_left(i);
        self.blossomendps[b].rotate_left(i);
        self.blossombase[b] = self.blossombase[self.blossomchilds[b][0]];
    }

    fn augment_matching(&mut self, k: usize) {
        let (v, w, _) = self.edges[k];
        for (s, p) in [(v, 2 * k + 1), (w, 2 * k)] {
            let (mut s, mut p) = (s, p);
            loop {
                let bs = self.inblossom[s];
                if bs >= self.n {
                    self.augment_blossom(bs, s);
                }
                self.mate[s] = p;
                if self.labelend[bs] == NONE {
                    break;
                }
                let t = self.endpoint[self.labelend[bs]];
                let bt = self.inblossom[t];
                s = self.endpoint[self.labelend[bt]];
                let j = self.endpoint[self.labelend[bt] ^ 1];
                if bt >= self.n {
                    self.augment_blossom(bt, j);
                }
                self.mate[j] = self.labelend[bt];
                p = self.labelend[bt] ^ 1;
            }
        }
    }

    /// Scans the queue; true when the matching grew.
    fn scan_queue(&mut self) -> bool {
        while let Some(v) = self.queue.pop() {
            for idx in 0..self.neighbend[v].len() {
                let p = self.neighbend[v][idx];
                let k = p / 2;
                let w = self.endpoint[p];
                if self.inblossom[v] == self.inblossom[w] {
                    continue;
                }
                let mut kslack = 0;
                if !self.allowedge[k] {
                    kslack = self.slack(k);
                    if kslack <= 0 {
                        self.allowedge[k] = true;
                    }
                }
                if self.allowedge[k] {
                    if self.label[self.inblossom[w]] == 0 {
                        self.assign_label(w, 2, p ^ 1);
                    } else if self.label[self.inblossom[w]] == 1 {
                        let base = self.scan_blossom(v, w);
                        if base != NONE {
                            self.add_blossom(base, k);
                        } else {
                            self.augment_matching(k);
                            return true;
                        }
                    } else if self.label[w] == 0 {
                        self.label[w] = 2;
                        self.labelend[w] = p ^ 1;
                    }
                } else if self.label[self.inblossom[w]] == 1 {
                    let b = self.inblossom[v];
                    if self.bestedge[b] == NONE || kslack < self.slack(self.bestedge[b]) {
                        self.bestedge[b] = k;
                    }
                } else if self.label[w] == 0
                    && (self.bestedge[w] == NONE || kslack < self.slack(self.bestedge[w]))
                {
                    self.bestedge[w] = k;
                }
            }
        }
        false
    }

    /// Changes the duals by the largest step that keeps them feasible;
    /// false when that step ends the search (no augmenting path left).
    fn update_duals(&mut self) -> bool {
        let n = self.n;
        // Type 1: a vertex dual reaches zero.
        let mut deltatype = 1;
        let mut delta = *self.dualvar[..n].iter().min().expect("n > 0");
        let mut deltaedge = NONE;
        let mut deltablossom = NONE;
        for v in 0..n {
            if self.label[self.inblossom[v]] == 0 && self.bestedge[v] != NONE {
                let d = self.slack(self.bestedge[v]);
                if d < delta {
                    delta = d;
                    deltatype = 2;
                    deltaedge = self.bestedge[v];
                }
            }
        }
        for b in 0..2 * n {
            if self.blossomparent[b] == NONE && self.label[b] == 1 && self.bestedge[b] != NONE {
                let d = self.slack(self.bestedge[b]) / 2;
                if d < delta {
                    delta = d;
                    deltatype = 3;
                    deltaedge = self.bestedge[b];
                }
            }
        }
        for b in n..2 * n {
            if self.blossombase[b] != NONE
                && self.blossomparent[b] == NONE
                && self.label[b] == 2
                && self.dualvar[b] < delta
            {
                delta = self.dualvar[b];
                deltatype = 4;
                deltablossom = b;
            }
        }
        for v in 0..n {
            match self.label[self.inblossom[v]] {
                1 => self.dualvar[v] -= delta,
                2 => self.dualvar[v] += delta,
                _ => {}
            }
        }
        for b in n..2 * n {
            if self.blossombase[b] != NONE && self.blossomparent[b] == NONE {
                match self.label[b] {
                    1 => self.dualvar[b] += delta,
                    2 => self.dualvar[b] -= delta,
                    _ => {}
                }
            }
        }
        match deltatype {
            1 => return false,
            2 => {
                self.allowedge[deltaedge] = true;
                let (mut i, j, _) = self.edges[deltaedge];
                if self.label[self.inblossom[i]] == 0 {
                    i = j;
                }
                self.queue.push(i);
            }
            3 => {
                self.allowedge[deltaedge] = true;
                let (i, _, _) = self.edges[deltaedge];
                self.queue.push(i);
            }
            _ => self.expand_blossom(deltablossom, false),
        }
        true
    }

    fn solve(&mut self) {
        let n = self.n;
        if n == 0 {
            return;
        }
        for _ in 0..n {
            self.label.fill(0);
            self.bestedge.fill(NONE);
            for b in n..2 * n {
                self.blossombestedges[b] = None;
            }
            self.allowedge.fill(false);
            self.queue.clear();
            for v in 0..n {
                if self.mate[v] == NONE && self.label[self.inblossom[v]] == 0 {
                    self.assign_label(v, 1, NONE);
                }
            }
            let augmented = loop {
                if self.scan_queue() {
                    break true;
                }
                if !self.update_duals() {
                    break false;
                }
            };
            if !augmented {
                break;
            }
            for b in n..2 * n {
                if self.blossomparent[b] == NONE
                    && self.blossombase[b] != NONE
                    && self.label[b] == 1
                    && self.dualvar[b] == 0
                {
                    self.expand_blossom(b, true);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    fn weight(edges: &[(usize, usize, i64)], mate: &[Option<usize>]) -> i64 {
        edges
            .iter()
            .filter(|&&(i, j, _)| mate[i] == Some(j))
            .map(|e| e.2)
            .sum()
    }

    /// The best weight of any matching, by trying every one.
    fn brute(n: usize, w: &[Vec<Option<i64>>], free: u32) -> i64 {
        let Some(i) = (0..n).find(|&i| free & (1 << i) != 0) else {
            return 0;
        };
        let rest = free & !(1 << i);
        let mut best = brute(n, w, rest);
        for j in 0..n {
            if rest & (1 << j) != 0 {
                if let Some(x) = w[i][j] {
                    best = best.max(x + brute(n, w, rest & !(1 << j)));
                }
            }
        }
        best
    }

    #[test]
    fn small_cases_of_the_original() {
        let mate = |n, e: &[(usize, usize, i64)]| max_weight_matching(n, e).mate;
        assert!(mate(0, &[]).is_empty());
        assert_eq!(mate(2, &[(0, 1, 1)]), [Some(1), Some(0)]);
        assert_eq!(
            mate(4, &[(1, 2, 10), (2, 3, 11)]),
            [None, None, Some(3), Some(2)]
        );
        assert_eq!(
            mate(5, &[(1, 2, 5), (2, 3, 11), (3, 4, 5)]),
            [None, None, Some(3), Some(2), None]
        );
        // An S-blossom, then an augmenting path through it.
        assert_eq!(
            mate(5, &[(1, 2, 8), (1, 3, 9), (2, 3, 10), (3, 4, 7)]),
            [None, Some(2), Some(1), Some(4), Some(3)]
        );
    }

    /// Random graphs, dense and sparse, weights narrow and wide: the
    /// weight found is the best one, the matched edges are tight, and the
    /// duals are a certificate (no edge of negative reduced cost, no
    /// unmatched vertex with a dual).
    #[test]
    fn random_graphs_match_an_exhaustive_search() {
        let mut rng = StdRng::seed_from_u64(7);
        for case in 0..3000 {
            let n = rng.gen_range(1..=12);
            let density = [0.2, 0.5, 1.0][case % 3];
            let top = [3, 20, 1_000_000][case % 5 % 3];
            let mut edges = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    if rng.gen_bool(density) {
                        edges.push((i, j, rng.gen_range(0..=top)));
                    }
                }
            }
            let mut w = vec![vec![None; n]; n];
            for &(i, j, x) in &edges {
                w[i][j] = Some(x);
                w[j][i] = Some(x);
            }
            let s = max_weight_matching(n, &edges);
            for (v, m) in s.mate.iter().enumerate() {
                if let Some(u) = m {
                    assert_eq!(s.mate[*u], Some(v));
                    assert!(w[v][*u].is_some());
                } else {
                    assert_eq!(s.dual[v], 0, "case {case}: unmatched vertex {v} has a dual");
                }
            }
            assert_eq!(
                weight(&edges, &s.mate),
                brute(n, &w, (1u32 << n) - 1),
                "case {case}: {edges:?}"
            );
            for &(i, j, x) in &edges {
                let r = s.reduced_cost(i, j, x);
                assert!(r >= 0, "case {case}: edge {i}-{j} reduced cost {r}");
                if s.mate[i] == Some(j) {
                    assert_eq!(r, 0, "case {case}: matched edge {i}-{j} not tight");
                }
            }
        }
    }
}
