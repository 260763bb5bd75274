//! Play time: how a playhead moves through something that lasts `duration` seconds (a clip, an
//! AnimeEffects timeline), and how two poses blend. Engine-neutral; the Bevy `Playback`
//! component is built on these functions.
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use super::{BonePose, WrapMode};
use glam::{Quat, Vec4};

/// How time runs past the ends of what is played.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlayMode {
    /// Wraps to the other end.
    #[default]
    Loop,
    /// Stops at the end and holds there.
    Once,
    /// Turns around at each end.
    PingPong,
}

/// What one step of [`step_time`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TimeStep {
    /// The new time, within `[0, duration]`.
    pub time: f32,
    /// How many times the time wrapped (loop; negative when playing backwards) or turned
    /// (ping-pong).
    pub laps: i32,
    /// Whether a `Once` play reached the end it was heading for.
    pub ended: bool,
}

/// Moves `time` by `step` seconds within `[0, duration]` as `mode` says. `direction` is the
/// ping-pong direction (+1 forwards, −1 backwards), turned at each end; other modes ignore it.
pub(crate) fn step_time(
    time: f32,
    step: f32,
    duration: f32,
    mode: PlayMode,
    direction: &mut f32,
) -> TimeStep {
    if duration <= 0.0 {
        return TimeStep {
            time: 0.0,
            laps: 0,
            ended: mode == PlayMode::Once,
        };
    }
    match mode {
        PlayMode::Loop => {
            let t = time + step;
            let laps = (t / duration).floor();
            let mut wrapped = t - laps * duration;
            if wrapped >= duration {
                wrapped = 0.0;
            }
            TimeStep {
                time: wrapped,
                laps: laps as i32,
                ended: false,
            }
        }
        PlayMode::Once => {
            let t = time + step;
            TimeStep {
                time: t.clamp(0.0, duration),
                laps: 0,
                ended: (step > 0.0 && t >= duration) || (step < 0.0 && t <= 0.0),
            }
        }
        PlayMode::PingPong => {
            let mut t = time + step * *direction;
            let mut turns = 0;
            while !(0.0..=duration).contains(&t) && turns < 1000 {
                t = if t > duration { 2.0 * duration - t } else { -t };
                *direction = -*direction;
                turns += 1;
            }
            TimeStep {
                time: t.clamp(0.0, duration),
                laps: turns,
                ended: false,
            }
        }
    }
}

/// A playhead: a time that moves through something `duration` seconds long at `speed`, as
/// `mode` says at the ends. The Bevy `Playback` component and every layer of a
/// [`super::layers::LayerStack`] move by it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Playhead {
    /// Seconds from the start.
    pub time: f32,
    /// Play rate: 1 is normal speed, negative plays backwards.
    pub speed: f32,
    /// What happens at the ends.
    pub mode: PlayMode,
    /// Holds the playhead where it is.
    pub paused: bool,
    /// Ping-pong direction: +1 forwards, −1 backwards.
    direction: f32,
    finished: bool,
}

impl Default for Playhead {
    fn default() -> Self {
        Self {
            time: 0.0,
            speed: 1.0,
            mode: PlayMode::Loop,
            paused: false,
            direction: 1.0,
            finished: false,
        }
    }
}

/// What one advance of a [`Playhead`] did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PlayStep {
    /// The time before the advance.
    pub from: f32,
    /// Seconds of play time the advance moved by (0 when paused or finished).
    pub step: f32,
    /// Wraps (loop) or turns (ping-pong) during the advance.
    pub laps: i32,
    /// A `Once` play reached its end in this advance.
    pub finished: bool,
}

impl Playhead {
    /// A playhead at 0 in `mode`, at normal speed.
    pub fn new(mode: PlayMode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    /// The playhead as its parts give it (`direction` is the ping-pong direction; any value
    /// below 0 means backwards).
    pub fn from_parts(
        time: f32,
        speed: f32,
        mode: PlayMode,
        paused: bool,
        direction: f32,
        finished: bool,
    ) -> Self {
        Self {
            time,
            speed,
            mode,
            paused,
            direction: if direction < 0.0 { -1.0 } else { 1.0 },
            finished,
        }
    }

    /// The ping-pong direction (+1 or −1).
    pub fn direction(&self) -> f32 {
        self.direction
    }

    /// Jumps to `time` seconds (not finished any more).
    pub fn seek(&mut self, time: f32) {
        self.time = time;
        self.finished = false;
    }

    /// Plays afresh from where the time is: forwards, not finished.
    pub fn restart(&mut self) {
        self.finished = false;
        self.direction = 1.0;
    }

    /// Whether a `Once` play reached its end.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Whether the time moves: neither paused nor finished.
    pub fn is_running(&self) -> bool {
        !(self.paused || self.finished)
    }

    /// The signed rate the time moves at (speed times the ping-pong direction).
    pub fn rate(&self) -> f32 {
        self.speed * self.direction
    }

    /// Advances by `dt` seconds of game time at the playhead's speed (see
    /// [`Playhead::advance_by`]).
    pub fn advance(&mut self, dt: f32, duration: f32) -> PlayStep {
        self.advance_by(dt * self.speed, duration)
    }

    /// Advances by `step` seconds of play time within `[0, duration]` as the mode says, when
    /// running; while paused or finished the time stays (a time outside the range is brought
    /// into it as playing would).
    pub fn advance_by(&mut self, step: f32, duration: f32) -> PlayStep {
        let from = self.time;
        let step = if self.is_running() && step.is_finite() {
            step
        } else {
            0.0
        };
        let mut result = PlayStep {
            from,
            step,
            ..PlayStep::default()
        };
        if step == 0.0 {
            self.time = held_time(self.time, duration, self.mode);
        } else {
            let s = step_time(self.time, step, duration, self.mode, &mut self.direction);
            self.time = s.time;
            result.laps = s.laps;
            if s.ended && !self.finished {
                self.finished = true;
                result.finished = true;
            }
        }
        result
    }
}

/// Maps any time into `[0, duration]` by looping or clamping (NaN reads as 0).
pub fn wrap_time(time: f32, duration: f32, mode: WrapMode) -> f32 {
    if time.is_nan() {
        return 0.0;
    }
    match mode {
        WrapMode::Loop if duration > 0.0 => {
            let t = time.rem_euclid(duration);
            // rem_euclid can round up to the divisor itself.
            if t >= duration { 0.0 } else { t }
        }
        WrapMode::Loop => 0.0,
        WrapMode::Clamp => time.clamp(0.0, duration.max(0.0)),
    }
}

/// Where a playhead that is not advancing shows: a time within `[0, duration]` as it is (the
/// end included, so that scrubbing to the end shows the last pose); outside it, a looping
/// play's time wraps (a seek past the end lands where playing would get), the other modes'
/// times are clamped. Not finite reads as 0.
pub(crate) fn held_time(time: f32, duration: f32, mode: PlayMode) -> f32 {
    if !time.is_finite() {
        return 0.0;
    }
    if (0.0..=duration).contains(&time) {
        return time;
    }
    wrap_time(
        time,
        duration,
        match mode {
            PlayMode::Loop => WrapMode::Loop,
            PlayMode::Once | PlayMode::PingPong => WrapMode::Clamp,
        },
    )
}

/// Weighted sum of two poses (`w` = 0 gives `a`, 1 gives `b`), the rotations sign-aligned and
/// the sum normalised, as the games blend clips (§3.3 of `docs/formats/ifp.md`).
pub fn blend(a: BonePose, b: BonePose, w: f32) -> BonePose {
    let b_rot = if a.rotation.dot(b.rotation) < 0.0 {
        -b.rotation
    } else {
        b.rotation
    };
    let r = Vec4::from(a.rotation) * (1.0 - w) + Vec4::from(b_rot) * w;
    BonePose {
        rotation: Quat::from_vec4(r.try_normalize().unwrap_or(Vec4::W)),
        translation: a.translation.lerp(b.translation, w),
        scale: a.scale.lerp(b.scale, w),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn step(t: f32, s: f32, mode: PlayMode, d: &mut f32) -> (f32, i32, bool) {
        let r = step_time(t, s, 1.0, mode, d);
        (r.time, r.laps, r.ended)
    }

    #[test]
    fn time_steps_by_mode() {
        let mut d = 1.0;
        assert_eq!(
            step(0.9, 0.2, PlayMode::Loop, &mut d),
            (0.100000024, 1, false)
        );
        assert_eq!(step(0.1, -0.2, PlayMode::Loop, &mut d).1, -1);
        assert_eq!(step(0.9, 0.2, PlayMode::Once, &mut d), (1.0, 0, true));
        assert_eq!(step(0.1, -0.2, PlayMode::Once, &mut d), (0.0, 0, true));
        let (t, turns, _) = step(0.9, 0.2, PlayMode::PingPong, &mut d);
        assert!((t - 0.9).abs() < 1e-6 && turns == 1 && d == -1.0);
        let (t, _, _) = step(t, 0.5, PlayMode::PingPong, &mut d);
        assert!((t - 0.4).abs() < 1e-6 && d == -1.0);
    }

    #[test]
    fn held_time_keeps_the_end_and_wraps_a_loop() {
        // Within the clip, ends included, the time stays.
        assert_eq!(held_time(1.0, 1.0, PlayMode::Loop), 1.0);
        // Past the end, a loop wraps (1.25 mod 1 = 0.25), a Once clip clamps.
        assert_eq!(held_time(1.25, 1.0, PlayMode::Loop), 0.25);
        assert_eq!(held_time(1.25, 1.0, PlayMode::Once), 1.0);
        assert_eq!(held_time(f32::NAN, 1.0, PlayMode::Once), 0.0);
    }

    #[test]
    fn blend_is_a_normalised_weighted_sum_across_the_sign_flip() {
        let a = BonePose {
            rotation: Quat::IDENTITY,
            translation: Vec3::ZERO,
            scale: Vec3::ONE,
        };
        // -q of 90° about Z is the same rotation; halfway is 45° about Z.
        let b = BonePose {
            rotation: -Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            translation: Vec3::X * 2.0,
            scale: Vec3::ONE,
        };
        let m = blend(a, b, 0.5);
        assert!(
            m.rotation
                .abs_diff_eq(Quat::from_rotation_z(std::f32::consts::FRAC_PI_4), 1e-6),
            "{}",
            m.rotation
        );
        assert_eq!(m.translation, Vec3::X);
    }
}
