//! [`mix`]: several clips' poses on one skeleton, combined as the games combine their playing
//! animations (`docs/formats/ifp.md` §3.3–§3.6), with Bevy's additive layers and bone masks on
//! top.
//!
//! # The games' rule, per joint
//!
//! Each layer that keys the joint brings its sampled value with a weight: the layer's weight,
//! times its mask's value for the joint.
//! * A **partial** layer keeps that weight. A **full** layer's weight is scaled by
//!   `1 − Σ(weights of the partial layers that key this joint)`, floored at 0: an upper-body
//!   clip at 0.5 takes half of every bone it keys from the full-body clips under it, and none of
//!   the bones it does not key.
//! * **Rotation**: the weighted sum of the keys, each negated first when it lies on the other
//!   hemisphere from the sum so far (the games' sign alignment), then normalised (an nlerp
//!   across clips). A joint no layer keys keeps its rest rotation (§3.6: the games would give it
//!   the identity; we keep the rest pose, as the spec recommends).
//! * **Translation**, by [`TranslationRule`]: VC and SA take a key as the bone's local position;
//!   GTA III adds it to the bone's rest position.
//! * **Scale** (the games have none; DAN clips may) follows the absolute translation rule.
//!
//! # Additive layers (Bevy's meaning)
//!
//! A layer marked additive brings its clip's *difference* from a reference pose of the same
//! clip: rotation `Δ = q · q_ref⁻¹`, translation `t − t_ref`, scale `s − s_ref`. After the
//! games' mix, each joint the layer keys becomes `slerp(I, Δ, w) · q` and `t + w·(t − t_ref)`,
//! which is what Bevy's `AnimationNodeType::Add` does with a clip authored as a difference
//! (`Quat::slerp(IDENTITY, value, weight) * current`, `current + weight · value`). At the
//! reference time an additive layer changes nothing.
//!
//! # Masks
//!
//! A mask is a weight per joint (joints past its end: 0), multiplying the layer's weight; a
//! joint a mask leaves out is, for the games' rule, a joint the layer does not key (so a full
//! layer under a masked partial layer keeps those joints whole).

#[cfg(doc)]
use super::PoseClip;
use super::{KeyedChannels, LocalPose, Quat4, Vec3x4, groups, mask_lanes};
use glam::Vec4;

/// How a [`mix`] places a joint's translation from the layers' keys (§3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TranslationRule {
    /// Vice City's and San Andreas' skinned peds: a key is the bone's local position. The keys'
    /// weighted sum, with the rest position taking the weight the layers keying the bone leave
    /// (`Σ w·t + (1 − W)·rest` for `W = Σ w ≤ 1`; a sum of weights over 1 is normalised).
    ///
    /// The spec writes SA's rule as `lerp(BonePos, Σ(blend·trans), Σ blend)`; read literally
    /// with the weights applied twice, it would shrink a lone layer at weight ½ to a quarter of
    /// its keys. We read the sum as already weighted: both readings agree whenever the weights
    /// sum to 1, as they do outside fades.
    #[default]
    Absolute,
    /// GTA III's unskinned peds: a key is an offset added to the bone's rest position
    /// (`rest + Σ w·t`). rigplay's IFP loader already adds the rest offsets to III clips' keys
    /// (so that III clips play by the absolute rule on every skeleton); this rule is for poses
    /// whose translations are still offsets.
    AddedToRest,
}

/// One layer of a [`mix`]: a pose sampled from `clip`, and how it enters the mix.
#[derive(Debug, Clone, Copy)]
pub struct MixLayer<'a> {
    /// The layer's pose, sampled from `clip` ([`super::sample`]).
    pub pose: &'a LocalPose,
    /// Which joints' channels `pose` keys ([`PoseClip::keyed`] of the clip it was sampled
    /// from): a joint whose channel holds the rest value contributes nothing to that channel.
    pub keyed: &'a KeyedChannels,
    /// The layer's weight (0 to 1 in the games); 0, negative or NaN weights contribute nothing.
    pub weight: f32,
    /// A partial layer (an upper-body clip) keeps its weight; full layers share what the
    /// partial layers leave of each joint.
    pub partial: bool,
    /// Per-joint weights multiplying `weight` (joints past the end: 0).
    pub mask: Option<&'a [f32]>,
    /// An additive layer: the clip's pose at its reference time. The layer adds its difference
    /// from that pose after the other layers are mixed.
    pub additive: Option<&'a LocalPose>,
}

impl MixLayer<'_> {
    /// Whether the layer takes part: a pose and clip of the skeleton's length, a positive
    /// weight, a reference pose of the same length if additive.
    fn usable(&self, joints: usize) -> bool {
        self.pose.len() == joints
            && self.keyed.len() == joints
            && self.weight > 0.0
            && self.weight.is_finite()
            && self.additive.is_none_or(|r| r.len() == joints)
    }

    /// The layer's weight per lane of group `g` (weight times mask).
    #[inline(always)]
    fn lanes(&self, g: usize) -> Vec4 {
        let w = Vec4::splat(self.weight);
        match self.mask {
            Some(mask) => w * mask_lanes(mask, g).max(Vec4::ZERO),
            None => w,
        }
    }
}

/// Mixes `layers` into `out` by the games' rule (§3.3–§3.6 of `docs/formats/ifp.md`; the
/// repository's `docs/layers.md` spells it out). Per joint, each layer that keys it brings its
/// weight times its mask's value:
/// * partial layers keep their weight; full ones are scaled by `1 − Σ(partial weights on the
///   joint)`, floored at 0;
/// * rotations: the weighted sum, each first sign-aligned to the sum so far, normalised;
/// * translations by `rule`; scales as [`TranslationRule::Absolute`];
/// * additive layers last: `slerp(I, q·q_ref⁻¹, w) · q` and `t + w·(t − t_ref)` (Bevy's
///   `AnimationNodeType::Add` on a clip authored as a difference).
///
/// Joints no layer keys get `rest`'s transform. Layers of another length than `rest`, or whose
/// weight is not a number above 0, are left out. `out` takes `rest`'s length (allocating only
/// if it grows).
pub fn mix(layers: &[MixLayer<'_>], rest: &LocalPose, rule: TranslationRule, out: &mut LocalPose) {
    let n = rest.len();
    out.resize(n);
    out.constants_of = 0;
    out.unit_scales = rest.unit_scales;
    mix_usable(layers, None, rest, rule, out);
}

/// [`mix`] with a bottom layer already in `out`: a full layer at weight 1, unmasked and not
/// additive (a ped's movement clip under its upper-body clips), sampled straight into `out`
/// from a clip keying `base` ([`PoseClip::keyed`]). The result is [`mix`]'s with that layer
/// first, but the lane groups no other layer weighs are left as they are: they are the base's
/// pose, which is what the mix makes of them (a unit rotation normalised is itself; a weight of
/// 1 leaves the rest nothing). So a partial clip over a walk costs only the bones it keys.
///
/// Where `out` or `base` is not of `rest`'s length, the base is left out: the other layers are
/// mixed as by [`mix`].
pub fn mix_onto(
    base: &KeyedChannels,
    layers: &[MixLayer<'_>],
    rest: &LocalPose,
    rule: TranslationRule,
    out: &mut LocalPose,
) {
    let n = rest.len();
    if out.len() != n || base.len() != n {
        return mix(layers, rest, rule, out);
    }
    out.unit_scales &= rest.unit_scales;
    mix_usable(layers, Some(base), rest, rule, out);
}

/// [`mix`] and [`mix_onto`] over the usable layers.
fn mix_usable(
    layers: &[MixLayer<'_>],
    base: Option<&KeyedChannels>,
    rest: &LocalPose,
    rule: TranslationRule,
    out: &mut LocalPose,
) {
    let n = rest.len();
    let usable = |l: &&MixLayer| l.usable(n);
    out.unit_scales &= layers
        .iter()
        .filter(usable)
        .all(|l| l.pose.unit_scales && l.additive.is_none_or(|r| r.unit_scales));
    // The usable layers, found once (on the stack for up to 16 layers).
    let mut few: [Option<&MixLayer>; 16] = [None; 16];
    let mut count = 0;
    for l in layers.iter().filter(usable) {
        if count < few.len() {
            few[count] = Some(l);
        }
        count += 1;
    }
    if let Some(first) = layers.first().filter(|_| count <= few.len()) {
        let mut list: [&MixLayer; 16] = [first; 16];
        for (to, from) in list.iter_mut().zip(few.iter().flatten()) {
            *to = from;
        }
        mix_list(&list[..count], base, n, rest, rule, out);
    } else {
        // Many layers, or none (every joint at rest).
        let list: Vec<&MixLayer> = layers.iter().filter(usable).collect();
        mix_list(&list, base, n, rest, rule, out);
    }
}

/// [`mix`] over the usable layers: without the scales when every scale is 1 (every weighted
/// mean of ones is one), without the partial pass when no layer is partial.
fn mix_list(
    layers: &[&MixLayer<'_>],
    base: Option<&KeyedChannels>,
    n: usize,
    rest: &LocalPose,
    rule: TranslationRule,
    out: &mut LocalPose,
) {
    // Per lane group: the full layers' share, and the translations' and scales' weights
    // summed (on the stack for skeletons of up to 64 joints). The rotations' weights need no
    // sum: a rotation no layer weighs stays the zero it starts at.
    const STACK_GROUPS: usize = 16;
    let groups = groups(n);
    let mut stack = [Vec4::ZERO; 3 * STACK_GROUPS];
    let mut heap = Vec::new();
    let sums: &mut [Vec4] = if groups <= STACK_GROUPS {
        &mut stack[..3 * groups]
    } else {
        heap.resize(3 * groups, Vec4::ZERO);
        &mut heap
    };
    let (full_share, sums) = sums.split_at_mut(groups);
    let (wt, ws) = sums.split_at_mut(groups);
    // Over a base: which groups some other layer weighs (the others are the base's pose).
    let mut stack_touched = [false; STACK_GROUPS];
    let mut heap_touched = Vec::new();
    let base = base.map(|keyed| {
        let touched: &mut [bool] = if groups <= STACK_GROUPS {
            &mut stack_touched[..groups]
        } else {
            heap_touched.resize(groups, false);
            &mut heap_touched
        };
        for (g, touched) in touched.iter_mut().enumerate() {
            *touched = layers.iter().any(|l| {
                let keys = l.keyed.rotation[g] + l.keyed.translation[g] + l.keyed.scale[g];
                (l.lanes(g) * keys).cmpgt(Vec4::ZERO).any()
            });
        }
        Base {
            keyed,
            touched: &*touched,
        }
    });
    if base.as_ref().is_some_and(|b| b.touched.contains(&true)) {
        // Groups are rewritten: the pose no longer holds the base clip's constants.
        out.constants_of = 0;
    }
    let sums = Sums { full_share, wt, ws };
    if out.unit_scales {
        mix_layers::<false>(layers, base, groups, rest, rule, sums, out)
    } else {
        mix_layers::<true>(layers, base, groups, rest, rule, sums, out)
    }
}

/// [`mix_onto`]'s bottom layer, in `out`: which channels its clip keys, and the lane groups
/// some other layer weighs (the only ones mixed).
struct Base<'a> {
    keyed: &'a KeyedChannels,
    touched: &'a [bool],
}

/// What [`mix_layers`] sums per lane group besides the pose itself.
struct Sums<'a> {
    /// `1 − Σ(partial weights)`, floored at 0: what the full layers share.
    full_share: &'a mut [Vec4],
    /// The translations' and scales' weights summed.
    wt: &'a mut [Vec4],
    ws: &'a mut [Vec4],
}

/// [`mix`], a layer at a time over every lane group (each layer's slices held through its
/// loop), summing into `out` and `sums`, then the sums made a pose, then the additive layers.
#[inline(always)]
fn mix_layers<const SCALES: bool>(
    layers: &[&MixLayer<'_>],
    base: Option<Base<'_>>,
    groups: usize,
    rest: &LocalPose,
    rule: TranslationRule,
    sums: Sums<'_>,
    out: &mut LocalPose,
) {
    let Sums { full_share, wt, ws } = sums;
    // What the partial layers take of each joint (those that key its rotation: the games test
    // whether the layer has a sequence for the bone).
    let is_partial = |l: &&&MixLayer| l.partial && l.additive.is_none();
    for l in layers.iter().filter(is_partial) {
        let drives = &l.keyed.rotation[..groups];
        for (g, (taken, d)) in full_share.iter_mut().zip(drives).enumerate() {
            *taken += l.lanes(g) * *d;
        }
    }
    for share in full_share.iter_mut() {
        *share = (Vec4::ONE - *share).max(Vec4::ZERO);
    }
    let rotations = &mut out.rotations[..groups];
    let translations = &mut out.translations[..groups];
    let scales = &mut out.scales[..groups];
    // Without a base, the first layer mixed sets the sums rather than adding to them (nothing
    // to align its sign to, no zeros to add to); with no such layer, they are zeros.
    let first = layers.iter().position(|l| l.additive.is_none());
    match &base {
        None => {
            if first.is_none() {
                rotations.fill(Quat4::ZERO);
                translations.fill(Vec3x4::ZERO);
            }
            if SCALES {
                scales.fill(Vec3x4::ZERO);
            }
        }
        // The base, a full layer at weight 1 and the first: its share of each group it
        // weighs is its pose scaled by the full layers' share where it keys (a zero sum
        // before it: nothing to align its sign to).
        Some(Base { keyed, touched }) => {
            for g in (0..groups).filter(|&g| touched[g]) {
                let share = full_share[g];
                let lr = share * keyed.rotation[g];
                rotations[g] = rotations[g].scaled(lr);
                let lt = share * keyed.translation[g];
                translations[g] = translations[g].scaled(lt);
                wt[g] = lt;
                if SCALES {
                    let ls = share * keyed.scale[g];
                    scales[g] = scales[g].scaled(ls);
                    ws[g] = ls;
                }
            }
        }
    }
    let touched = |g: usize| base.as_ref().is_none_or(|b| b.touched[g]);
    for (i, l) in layers.iter().enumerate() {
        if l.additive.is_some() {
            continue;
        }
        if base.is_none() && first == Some(i) {
            add_layer::<true>(l, groups, full_share, rotations, translations, wt);
        } else {
            add_layer::<false>(l, groups, full_share, rotations, translations, wt);
        }
        let drives = &l.keyed;
        let pose = l.pose;
        if SCALES {
            let channels = scales
                .iter_mut()
                .zip(&pose.scales[..groups])
                .zip(&drives.scale[..groups])
                .zip(ws.iter_mut());
            for (g, (((s, ls_), ds), ws)) in channels.enumerate() {
                let ls = weight(l, g, full_share) * *ds;
                if ls.cmpgt(Vec4::ZERO).any() {
                    s.add_scaled(ls_, ls);
                    *ws += ls;
                }
            }
        }
    }
    // The sums made a pose: rotations normalised (the rest where nothing keys them),
    // translations and scales by their rules.
    for g in (0..groups).filter(|&g| touched(g)) {
        let (rr, rt, rs) = (&rest.rotations[g], &rest.translations[g], &rest.scales[g]);
        let q = &rotations[g];
        let len2 = q.dot(q);
        // (Zero where no layer weighs the rotation.)
        let rot_ok = len2.cmpgt(Vec4::ZERO);
        let qn = q.scaled(len2.sqrt().recip());
        rotations[g] = Quat4 {
            x: Vec4::select(rot_ok, qn.x, rr.x),
            y: Vec4::select(rot_ok, qn.y, rr.y),
            z: Vec4::select(rot_ok, qn.z, rr.z),
            w: Vec4::select(rot_ok, qn.w, rr.w),
        };
        let t = &translations[g];
        translations[g] = match rule {
            TranslationRule::Absolute => absolute(t, wt[g], rt),
            TranslationRule::AddedToRest => Vec3x4 {
                x: t.x + rt.x,
                y: t.y + rt.y,
                z: t.z + rt.z,
            },
        };
        scales[g] = if SCALES {
            absolute(&scales[g], ws[g], rs)
        } else {
            Vec3x4::ONE
        };
    }
    for l in layers {
        let Some(reference) = l.additive else {
            continue;
        };
        let drives = &l.keyed;
        for g in (0..groups).filter(|&g| touched(g)) {
            let w = l.lanes(g);
            // Masked out of the group's joints: the turn would be the identity and the
            // offsets zero.
            if !w.cmpgt(Vec4::ZERO).any() {
                continue;
            }
            let a = (w * drives.rotation[g]).clamp(Vec4::ZERO, Vec4::ONE);
            if a.cmpgt(Vec4::ZERO).any() {
                let delta = mul(&l.pose.rotations[g], &conjugate(&reference.rotations[g]));
                rotations[g] = mul(&partial_turn(&delta, a), &rotations[g]);
            }
            let at = w * drives.translation[g];
            if at.cmpgt(Vec4::ZERO).any() {
                let (p, r) = (&l.pose.translations[g], &reference.translations[g]);
                let tr = &mut translations[g];
                tr.x += (p.x - r.x) * at;
                tr.y += (p.y - r.y) * at;
                tr.z += (p.z - r.z) * at;
            }
            if SCALES {
                let as_ = w * drives.scale[g];
                let (p, r) = (&l.pose.scales[g], &reference.scales[g]);
                let sc = &mut scales[g];
                sc.x += (p.x - r.x) * as_;
                sc.y += (p.y - r.y) * as_;
                sc.z += (p.z - r.z) * as_;
            }
        }
    }
}

/// `l`'s weight on lane group `g`: its weight and mask's, and for a full layer the share the
/// partial layers leave.
#[inline(always)]
fn weight(l: &MixLayer<'_>, g: usize, full_share: &[Vec4]) -> Vec4 {
    let w = l.lanes(g);
    match l.partial {
        true => w,
        false => w * full_share[g],
    }
}

/// Adds layer `l`'s weighted rotations (each sign-aligned to the sum so far) and translations
/// to the sums; `FIRST` (the first layer of a mix without a base) sets the sums to them instead
/// (zeros where it weighs nothing: nothing to align to, no zeros to add to).
#[inline(always)]
fn add_layer<const FIRST: bool>(
    l: &MixLayer<'_>,
    groups: usize,
    full_share: &[Vec4],
    rotations: &mut [Quat4],
    translations: &mut [Vec3x4],
    wt: &mut [Vec4],
) {
    let (drives, pose) = (&l.keyed, l.pose);
    let channels = rotations[..groups]
        .iter_mut()
        .zip(translations[..groups].iter_mut())
        .zip(&pose.rotations[..groups])
        .zip(&pose.translations[..groups])
        .zip(&drives.rotation[..groups])
        .zip(&drives.translation[..groups])
        .zip(wt[..groups].iter_mut());
    for (g, ((((((q, t), r), lt_), dr), dt), wt)) in channels.enumerate() {
        let w = weight(l, g, full_share);
        // A channel the clip does not key on any of the group's joints is not read (its lanes
        // hold the rest, which sampling does not rewrite: reading them would only bring cold
        // memory in to multiply by zero).
        let (lr, lt) = (w * *dr, w * *dt);
        let (keys_r, keys_t) = (lr.cmpgt(Vec4::ZERO).any(), lt.cmpgt(Vec4::ZERO).any());
        if FIRST {
            *q = if keys_r { r.scaled(lr) } else { Quat4::ZERO };
            *t = if keys_t { lt_.scaled(lt) } else { Vec3x4::ZERO };
            *wt = lt;
            continue;
        }
        // A layer with no weight on the group's joints (masked out, or taken whole by the
        // partial layers) adds nothing.
        if keys_r {
            // Sign-aligned to the sum so far (a zero sum flips nothing).
            q.add_scaled(r, Vec4::select(q.dot(r).cmplt(Vec4::ZERO), -lr, lr));
        }
        if keys_t {
            t.add_scaled(lt_, lt);
            *wt += lt;
        }
    }
}

/// The absolute rule: `sum + (1 − W)·rest` for `W ≤ 1`, `sum / W` above, `rest` where `W = 0`.
#[inline(always)]
fn absolute(sum: &Vec3x4, w: Vec4, rest: &Vec3x4) -> Vec3x4 {
    let over = w.cmpgt(Vec4::ONE);
    // (A division only where some lane's weights sum over 1, which only overlapping fades do.)
    let scale = match over.any() {
        true => Vec4::select(over, w.recip(), Vec4::ONE),
        false => Vec4::ONE,
    };
    let left = (Vec4::ONE - w).max(Vec4::ZERO);
    Vec3x4 {
        x: sum.x * scale + rest.x * left,
        y: sum.y * scale + rest.y * left,
        z: sum.z * scale + rest.z * left,
    }
}

/// `a · b` per lane (Hamilton product).
#[inline(always)]
fn mul(a: &Quat4, b: &Quat4) -> Quat4 {
    Quat4 {
        x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    }
}

#[inline(always)]
fn conjugate(q: &Quat4) -> Quat4 {
    Quat4 {
        x: -q.x,
        y: -q.y,
        z: -q.z,
        w: q.w,
    }
}

/// `slerp(I, d, a)` per lane: the fraction `a` (0 to 1) of rotation `d`, the short way round.
#[inline(always)]
fn partial_turn(d: &Quat4, a: Vec4) -> Quat4 {
    // The short way: `d` on the hemisphere of the identity (w ≥ 0), where its angle from the
    // identity is at most π/2, the range the slerp polynomial covers.
    let sign = Vec4::select(d.w.cmplt(Vec4::ZERO), Vec4::NEG_ONE, Vec4::ONE);
    let d = d.scaled(sign);
    // θ = acos(w) by Abramowitz and Stegun's 4.4.46 (|error| ≤ 2e-8 rad on [0, 1]), all four
    // lanes at once; sin θ = √(1 − w²), so θ / sin θ needs no other function (→ 1 as θ → 0).
    let w = d.w.clamp(Vec4::ZERO, Vec4::ONE);
    const A: [f32; 8] = [
        std::f32::consts::FRAC_PI_2,
        -0.214_598_8,
        0.088_978_99,
        -0.050_174_3,
        0.030_891_88,
        -0.017_088_126,
        0.006_670_09,
        -0.001_262_491,
    ];
    let mut p = Vec4::splat(A[7]);
    for c in A[..7].iter().rev() {
        p = Vec4::splat(*c) + w * p;
    }
    let theta = (Vec4::ONE - w).max(Vec4::ZERO).sqrt() * p;
    let sin = (Vec4::ONE - w * w).max(Vec4::ZERO).sqrt();
    let small = sin.cmplt(Vec4::splat(1e-4));
    let inv_sinc = Vec4::select(
        small,
        Vec4::ONE + theta * theta * (1.0 / 6.0),
        theta / Vec4::select(small, Vec4::ONE, sin),
    );
    let identity = Quat4::IDENTITY;
    Quat4::slerp::<5>(&identity, &d, a, Vec4::ONE - a, theta, inv_sinc)
}
