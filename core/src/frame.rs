//! Contact-frame conventions.
//!
//! Inside the project every contact owns three consecutive rows, **normal first**:
//! `[n, t1, t2]` (FCLib, Todorov 2010, Erleben). Castro et al. (SAP) and Mylapilli and Jain
//! order them **normal last**, `[t1, t2, n]`. Formulations of those papers convert at their
//! edge with these functions, which are each other's inverse.

/// Reorders a per-contact vector from normal first `[n, t1, t2]` to normal last `[t1, t2, n]`.
pub fn to_normal_last(v: &[f64]) -> Vec<f64> {
    v.chunks_exact(3).flat_map(|c| [c[1], c[2], c[0]]).collect()
}

/// Reorders a per-contact vector from normal last `[t1, t2, n]` to normal first `[n, t1, t2]`.
pub fn to_normal_first(v: &[f64]) -> Vec<f64> {
    v.chunks_exact(3).flat_map(|c| [c[2], c[0], c[1]]).collect()
}

/// The row index, in normal-last order, of row `i` given in normal-first order.
pub fn normal_last_index(i: usize) -> usize {
    let (c, k) = (i / 3, i % 3);
    3 * c + [2, 0, 1][k]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_are_inverse_and_move_the_normal() {
        let v: Vec<f64> = (0..9).map(|i| i as f64).collect();
        let last = to_normal_last(&v);
        assert_eq!(last, vec![1.0, 2.0, 0.0, 4.0, 5.0, 3.0, 7.0, 8.0, 6.0]);
        assert_eq!(to_normal_first(&last), v);
        for (i, &vi) in v.iter().enumerate() {
            assert_eq!(last[normal_last_index(i)], vi);
        }
    }
}
