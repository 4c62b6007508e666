//! Union-find over `0..n`, for the connected components the project needs: the kinematic trees
//! of a block-diagonal `A` ([`crate::generalized`]) and the islands of touching contacts
//! ([`crate::islands`]).

/// Union-find with path halving; each set's root is its smallest member.
pub struct DisjointSets(Vec<usize>);

impl DisjointSets {
    /// `n` singletons.
    pub fn new(n: usize) -> DisjointSets {
        DisjointSets((0..n).collect())
    }

    fn root(&mut self, mut i: usize) -> usize {
        while self.0[i] != i {
            self.0[i] = self.0[self.0[i]];
            i = self.0[i];
        }
        i
    }

    /// Joins the sets of `a` and `b`.
    pub fn union(&mut self, a: usize, b: usize) {
        let (x, y) = (self.root(a), self.root(b));
        if x != y {
            self.0[x.max(y)] = x.min(y);
        }
    }

    /// Each item's set as a label `0, 1, ...`, numbered in the order of each set's smallest
    /// member.
    pub fn labels(mut self) -> Vec<usize> {
        let n = self.0.len();
        let mut id = vec![usize::MAX; n];
        let mut next = 0;
        (0..n)
            .map(|i| {
                let r = self.root(i);
                if id[r] == usize::MAX {
                    id[r] = next;
                    next += 1;
                }
                id[r]
            })
            .collect()
    }

    /// The sets, each sorted, ordered by their smallest member.
    pub fn groups(self) -> Vec<Vec<usize>> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, label) in self.labels().into_iter().enumerate() {
            if label == groups.len() {
                groups.push(Vec::new());
            }
            groups[label].push(i);
        }
        groups
    }
}
