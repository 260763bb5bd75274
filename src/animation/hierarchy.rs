//! Parent lists in any order: the order that puts every parent before its children, or where
//! the list is broken, and world transforms composed down it. Shared by the DFF reader's frame
//! check and world matrices, the models' frames, the pose pipeline's skeletons and the
//! retargeting's rest poses.

/// Why a parent list has no parents-first order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HierarchyFault {
    /// `node`'s parent is past the end of the list.
    ParentOutOfRange { node: usize, parent: usize },
    /// `node` lies on a cycle (met again on its own walk up).
    Cycle { node: usize },
}

/// The indices of `parents` with every parent before its children, each node after the chain
/// above it (index order where the list already has it). Walks each chain up once: the first
/// fault met on those walks, in index order, is the one returned.
pub(crate) fn parents_first(parents: &[Option<usize>]) -> Result<Vec<usize>, HierarchyFault> {
    match walk(parents) {
        (order, _, None) => Ok(order),
        (_, _, Some(fault)) => Err(fault),
    }
}

/// [`parents_first`] for a list that may be broken (a hand-built one: files are checked as they
/// are read): a node whose parent is past the end, or whose walk up comes back to it, is taken as
/// a root. Returns the order and the parents as taken (the list itself where it is sound).
pub(crate) fn parents_first_or_cut(parents: &[Option<usize>]) -> (Vec<usize>, Vec<Option<usize>>) {
    let (order, taken, _) = walk(parents);
    (order, taken)
}

/// The walks of [`parents_first`]: the order, the parents as taken (each fault cut: the node
/// walked from last on a cycle, or the node whose parent is past the end, taken as a root), and
/// the first fault met.
fn walk(parents: &[Option<usize>]) -> (Vec<usize>, Vec<Option<usize>>, Option<HierarchyFault>) {
    let n = parents.len();
    let mut taken: Vec<Option<usize>> = parents.to_vec();
    let mut first_fault = None;
    // 0: not seen, 1: on the chain being walked, 2: placed.
    let mut state = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    let mut chain: Vec<usize> = Vec::new();
    for start in 0..n {
        let mut node = start;
        chain.clear();
        let fault = loop {
            match state[node] {
                2 => break None,
                1 => {
                    // A cycle: the node walked from last hangs under one on this walk.
                    if let Some(&last) = chain.last() {
                        taken[last] = None;
                    }
                    break Some(HierarchyFault::Cycle { node });
                }
                _ => {}
            }
            state[node] = 1;
            chain.push(node);
            match parents[node] {
                Some(parent) if parent < n => node = parent,
                Some(parent) => {
                    taken[node] = None;
                    break Some(HierarchyFault::ParentOutOfRange { node, parent });
                }
                None => break None,
            }
        };
        first_fault = first_fault.or(fault);
        for &placed in chain.iter().rev() {
            state[placed] = 2;
            order.push(placed);
        }
    }
    (order, taken, first_fault)
}

/// Each node's world transform, `world(parent) · local(node)`, from a parents-first `order` and
/// sound `parents` ([`parents_first_or_cut`]'s); a root's is its local transform.
pub(crate) fn compose<T: Copy + core::ops::Mul<Output = T>>(
    order: &[usize],
    parents: &[Option<usize>],
    local: impl Fn(usize) -> T,
    identity: T,
) -> Vec<T> {
    let mut world = vec![identity; parents.len()];
    for &i in order {
        world[i] = match parents[i] {
            Some(p) => world[p] * local(i),
            None => local(i),
        };
    }
    world
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_come_first_and_faults_are_named() {
        // 0 under 2, 2 under 1, 1 a root; 3 under 0.
        assert_eq!(
            parents_first(&[Some(2), None, Some(1), Some(0)]),
            Ok(vec![1, 2, 0, 3])
        );
        assert_eq!(parents_first(&[None, Some(0)]), Ok(vec![0, 1]));
        assert_eq!(
            parents_first(&[None, Some(2), Some(1)]),
            Err(HierarchyFault::Cycle { node: 1 })
        );
        assert_eq!(
            parents_first(&[Some(0)]),
            Err(HierarchyFault::Cycle { node: 0 })
        );
        assert_eq!(
            parents_first(&[None, Some(5)]),
            Err(HierarchyFault::ParentOutOfRange { node: 1, parent: 5 })
        );
        assert_eq!(parents_first(&[]), Ok(vec![]));
    }

    #[test]
    fn a_broken_list_is_cut_where_it_breaks_and_composes_in_order() {
        // Sound: as `parents_first`, the parents kept.
        let sound = [Some(2), None, Some(1), Some(0)];
        assert_eq!(
            parents_first_or_cut(&sound),
            (vec![1, 2, 0, 3], sound.to_vec())
        );
        // 1 and 2 hang under each other: the walk from 1 goes 1 → 2 → 1, so 2 (walked from last)
        // becomes the root; 3's parent is past the end: a root too.
        assert_eq!(
            parents_first_or_cut(&[None, Some(2), Some(1), Some(9)]),
            (vec![0, 2, 1, 3], vec![None, Some(2), None, None])
        );
        // A node its own parent.
        assert_eq!(parents_first_or_cut(&[Some(0)]), (vec![0], vec![None]));
        // Composed down the chain 1 → 2 → 0 → 3, with scales for transforms: 1 is 2; 2 is
        // 2 · 3 = 6; 0 is 6 · 5 = 30; 3 is 30 · 7 = 210.
        let (order, parents) = parents_first_or_cut(&sound);
        let scales = [5.0_f32, 2.0, 3.0, 7.0];
        assert_eq!(
            compose(&order, &parents, |i| scales[i], 1.0),
            vec![30.0, 2.0, 6.0, 210.0]
        );
    }
}
