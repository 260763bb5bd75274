//! Parent lists in any order: the order that puts every parent before its children, or where
//! the list is broken. Shared by the DFF reader's frame check, the pose pipeline's skeletons
//! and the retargeting's rest poses.

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
    let n = parents.len();
    // 0: not seen, 1: on the chain being walked, 2: placed.
    let mut state = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    let mut chain = Vec::new();
    for start in 0..n {
        let mut node = start;
        chain.clear();
        loop {
            match state[node] {
                2 => break,
                1 => return Err(HierarchyFault::Cycle { node }),
                _ => {}
            }
            state[node] = 1;
            chain.push(node);
            match parents[node] {
                None => break,
                Some(parent) if parent >= n => {
                    return Err(HierarchyFault::ParentOutOfRange { node, parent });
                }
                Some(parent) => node = parent,
            }
        }
        for &placed in chain.iter().rev() {
            state[placed] = 2;
            order.push(placed);
        }
    }
    Ok(order)
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
}
