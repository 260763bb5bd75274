//! Bone masks: which bones of a character a layer affects, named by body part or by bone.

use crate::animation::retarget::{BoneMap, HumanoidBone};

/// The bones a layer affects (Bevy's `AnimationGraph` mask groups, named as animators name
/// them). Body parts are found from the bone names by [`BoneMap::detect`] (GTA, Mixamo, VRM,
/// Unreal and Biped names); bone names match as GTA matches them: case and whitespace ignored
/// (`"Spine 1"` is `"spine1"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BoneMask {
    /// The spine's first bone and everything under it: chest, arms, neck, head.
    UpperBody,
    /// Every bone not in [`BoneMask::UpperBody`]: root, pelvis, legs.
    LowerBody,
    /// The left shoulder (clavicle), or the upper arm where there is none, and everything under
    /// it.
    LeftArm,
    /// The right shoulder or upper arm and everything under it.
    RightArm,
    /// The neck, or the head where there is none, and everything under it.
    Head,
    /// Exactly these bones.
    Bones(Vec<String>),
    /// These bones and everything under them.
    Below(Vec<String>),
    /// Every bone of any of these masks.
    Any(Vec<BoneMask>),
}

/// A [`BoneMask`] worked out on one skeleton ([`BoneMask::resolve`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResolvedMask {
    /// Per bone, 1 where the mask includes it, else 0.
    pub weights: Vec<f32>,
    /// What the mask names that the skeleton lacks: bone names, or the body part whose bone was
    /// not found (`"upper body (no spine bone)"`).
    pub unknown: Vec<String>,
}

/// A bone name's matching form: ASCII lower case, whitespace removed.
fn key(name: &str) -> String {
    name.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl BoneMask {
    /// The mask on a skeleton whose bones are `names`, `parents[i]` being bone `i`'s parent
    /// (any order; a parent index out of range or a cycle reads as no parent further up).
    pub fn resolve(&self, names: &[&str], parents: &[Option<usize>]) -> ResolvedMask {
        let n = names.len();
        let mut out = ResolvedMask {
            weights: vec![0.0; n],
            unknown: Vec::new(),
        };
        self.mark(names, parents, &mut out);
        out
    }

    fn mark(&self, names: &[&str], parents: &[Option<usize>], out: &mut ResolvedMask) {
        let n = names.len();
        let humanoid = || BoneMap::detect(names).1;
        let first = |bones: &[HumanoidBone]| {
            let map = humanoid();
            bones.iter().find_map(|b| map.get(*b)).filter(|&i| i < n)
        };
        let subtree = |root: Option<usize>, what: &str, out: &mut ResolvedMask| match root {
            Some(r) => {
                for b in 0..n {
                    if is_under(b, r, parents) {
                        out.weights[b] = 1.0;
                    }
                }
            }
            None => out.unknown.push(what.to_owned()),
        };
        use HumanoidBone::*;
        match self {
            BoneMask::UpperBody => subtree(
                first(&[Spine, Chest, UpperChest, Neck]),
                "upper body (no spine bone)",
                out,
            ),
            BoneMask::LowerBody => {
                let mut upper = ResolvedMask {
                    weights: vec![0.0; n],
                    unknown: Vec::new(),
                };
                BoneMask::UpperBody.mark(names, parents, &mut upper);
                if upper.unknown.is_empty() {
                    for (w, u) in out.weights.iter_mut().zip(&upper.weights) {
                        if *u == 0.0 {
                            *w = 1.0;
                        }
                    }
                } else {
                    out.unknown.push("lower body (no spine bone)".to_owned());
                }
            }
            BoneMask::LeftArm => subtree(
                first(&[LeftShoulder, LeftUpperArm]),
                "left arm (no left shoulder or upper arm)",
                out,
            ),
            BoneMask::RightArm => subtree(
                first(&[RightShoulder, RightUpperArm]),
                "right arm (no right shoulder or upper arm)",
                out,
            ),
            BoneMask::Head => subtree(first(&[Neck, Head]), "head (no neck or head)", out),
            BoneMask::Bones(wanted) | BoneMask::Below(wanted) => {
                let below = matches!(self, BoneMask::Below(_));
                for name in wanted {
                    let k = key(name);
                    let found: Vec<usize> = (0..n).filter(|&i| key(names[i]) == k).collect();
                    if found.is_empty() {
                        out.unknown.push(name.clone());
                    }
                    for f in found {
                        if below {
                            subtree(Some(f), name, out);
                        } else {
                            out.weights[f] = 1.0;
                        }
                    }
                }
            }
            BoneMask::Any(masks) => {
                for m in masks {
                    m.mark(names, parents, out);
                }
            }
        }
    }
}

/// Whether bone `b` is `root` or under it (walking at most `parents.len()` steps up, so that a
/// cycle ends).
fn is_under(b: usize, root: usize, parents: &[Option<usize>]) -> bool {
    let mut at = Some(b);
    for _ in 0..=parents.len() {
        match at {
            Some(x) if x == root => return true,
            Some(x) => at = parents.get(x).copied().flatten(),
            None => return false,
        }
    }
    false
}
