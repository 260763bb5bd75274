//! [`Playback`]: the playhead of every rig, 2D or 3D. It knows no format: it holds a time, a
//! speed, a mode and how long what it plays lasts, and [`PlaybackPlugin`] advances it by
//! Bevy's virtual time. What it plays reads its time afterwards: the skeletal wing samples a
//! clip at it ([`super::SkeletalClip`]), an AnimeEffects view draws the frame at it.

use crate::animation::{PlayMode, PlayStep, Playhead};
use bevy::prelude::*;

bevy::reflect::impl_reflect! {
    #[reflect(Debug, PartialEq, Default)]
    #[type_path = "rigplay::animation"]
    enum PlayMode {
        Loop,
        Once,
        PingPong,
    }
}

/// The playhead of a rig. Time advances with Bevy's virtual time (pausing `Time<Virtual>`
/// pauses every rig), times `speed` (negative plays backwards), within `[0, duration]` by
/// `mode`. Changing `time` with [`Playback::seek`] shows that pose in the same frame.
///
/// The playhead moves once it knows its [`duration`](Playback::duration).
#[derive(Component, Debug, Clone, Reflect)]
#[reflect(Component, Default)]
pub struct Playback {
    /// Seconds from the start.
    pub time: f32,
    /// Play rate: 1 is normal speed, negative plays backwards.
    pub speed: f32,
    /// What happens at the ends.
    pub mode: PlayMode,
    /// Holds the playhead where it is (seeks still show).
    pub paused: bool,
    /// Ping-pong direction: +1 forwards, −1 backwards.
    direction: f32,
    finished: bool,
    /// How long what is played lasts, seconds; `None` until the rig knows (the playhead stands
    /// still until then). The skeletal wing sets it from the clip a character plays each frame;
    /// other rigs set it from their timeline.
    pub duration: Option<f32>,
    /// What the last advance did.
    last: PlaybackStep,
}

/// What the last advance of a [`Playback`] did, for systems that follow its movement (root
/// motion).
#[derive(Debug, Clone, Copy, PartialEq, Default, Reflect)]
pub struct PlaybackStep {
    /// The time before the advance.
    pub from: f32,
    /// Seconds of play time the advance moved by (0 when paused, finished or not yet timed).
    pub step: f32,
    /// Wraps (loop) or turns (ping-pong) during the advance: [`PlaybackLooped`] is sent when
    /// not 0.
    pub laps: i32,
    /// A `Once` play reached its end in this advance: [`PlaybackFinished`] is sent.
    pub finished: bool,
}

impl From<PlayStep> for PlaybackStep {
    fn from(s: PlayStep) -> Self {
        Self {
            from: s.from,
            step: s.step,
            laps: s.laps,
            finished: s.finished,
        }
    }
}

impl From<PlaybackStep> for PlayStep {
    fn from(s: PlaybackStep) -> Self {
        Self {
            from: s.from,
            step: s.step,
            laps: s.laps,
            finished: s.finished,
        }
    }
}

impl Default for Playback {
    fn default() -> Self {
        Self {
            time: 0.0,
            speed: 1.0,
            mode: PlayMode::Loop,
            paused: false,
            direction: 1.0,
            finished: false,
            duration: None,
            last: PlaybackStep::default(),
        }
    }
}

impl Playback {
    /// Plays looped from the start at normal speed.
    pub fn looping() -> Self {
        Self::default()
    }

    /// Plays once from the start at normal speed, then holds the end.
    pub fn once() -> Self {
        Self::default().with_mode(PlayMode::Once)
    }

    /// The same playhead with another mode.
    pub fn with_mode(mut self, mode: PlayMode) -> Self {
        self.mode = mode;
        self
    }

    /// The same playhead with another speed.
    pub fn with_speed(mut self, speed: f32) -> Self {
        self.speed = speed;
        self
    }

    /// Jumps to `time` seconds; the pose shows in this frame.
    pub fn seek(&mut self, time: f32) {
        self.time = time;
        self.finished = false;
    }

    /// Jumps to a frame at `fps` frames per second.
    pub fn seek_frame(&mut self, frame: u32, fps: f32) {
        self.seek(frame as f32 / fps);
    }

    /// Whether a `Once` play reached its end (and holds there until a seek or a new clip).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// What the last advance did.
    pub fn last_step(&self) -> PlaybackStep {
        self.last
    }

    /// Plays afresh from where the time is: forwards (ping-pong), not finished. What a rig does
    /// when what it plays is replaced.
    pub fn restart(&mut self) {
        self.finished = false;
        self.direction = 1.0;
    }

    /// The signed rate the time moves at now (speed times the ping-pong direction).
    pub fn rate(&self) -> f32 {
        self.speed * self.direction
    }

    /// Whether the time moves this frame: neither paused nor finished.
    pub fn is_running(&self) -> bool {
        !(self.paused || self.finished)
    }

    /// Advances the time by `dt` seconds of game time within `[0, duration]`, as the mode says;
    /// returns the step, which also says whether the time wrapped and whether a `Once` play just
    /// ended. While paused or finished, the time stays (a seek outside the range is brought
    /// into it as playing would).
    pub fn advance(&mut self, dt: f32, duration: f32) -> PlaybackStep {
        let mut head = Playhead::from_parts(
            self.time,
            self.speed,
            self.mode,
            self.paused,
            self.direction,
            self.finished,
        );
        let s = head.advance(dt, duration);
        self.time = head.time;
        self.direction = head.direction();
        self.finished = head.is_finished();
        self.last = s.into();
        self.last
    }
}

/// Triggered on a rig each time its playback wraps (loop) or turns (ping-pong).
#[derive(EntityEvent, Debug, Clone)]
pub struct PlaybackLooped {
    /// The rig whose playback wrapped.
    pub entity: Entity,
}

/// Triggered on a rig when a `Once` playback reaches its end.
#[derive(EntityEvent, Debug, Clone)]
pub struct PlaybackFinished {
    /// The rig whose playback ended.
    pub entity: Entity,
}

/// The order of the playback work in `PostUpdate`, after Bevy's animation and before transform
/// propagation: rigs tell their playheads what they play ([`Prepare`](Self::Prepare)), the
/// playheads move ([`Advance`](Self::Advance)), rigs show the new time ([`Apply`](Self::Apply)).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlaybackSystems {
    /// Rigs bind what they play and set their playheads' durations.
    Prepare,
    /// Every [`Playback`] advances by virtual time.
    Advance,
    /// Rigs pose themselves at their playheads' times.
    Apply,
}

/// The playhead of every rig: advances each [`Playback`] by virtual time once per frame and sends
/// [`PlaybackLooped`] / [`PlaybackFinished`]. Knows no format; the format plugins add it (adding
/// it again, before or after them, does nothing more).
pub struct PlaybackPlugin;

/// Marks that [`PlaybackPlugin`] is built, so that adding it twice adds its systems once.
#[derive(Resource)]
struct PlaybackInstalled;

impl Plugin for PlaybackPlugin {
    fn is_unique(&self) -> bool {
        false
    }

    fn build(&self, app: &mut App) {
        if app.world().contains_resource::<PlaybackInstalled>() {
            return;
        }
        app.insert_resource(PlaybackInstalled)
            .register_type::<Playback>()
            .configure_sets(
                PostUpdate,
                (
                    PlaybackSystems::Prepare,
                    PlaybackSystems::Advance,
                    PlaybackSystems::Apply,
                )
                    .chain()
                    .after(bevy::app::AnimationSystems)
                    .before(TransformSystems::Propagate),
            )
            .add_systems(
                PostUpdate,
                advance_playbacks
                    .run_if(any_with_component::<Playback>)
                    .in_set(PlaybackSystems::Advance),
            );
    }
}

/// Advances every playhead that knows its duration.
pub(crate) fn advance_playbacks(
    mut commands: Commands,
    time: Res<Time>,
    mut playbacks: Query<(Entity, &mut Playback)>,
) {
    let dt = time.delta_secs();
    for (entity, mut playback) in &mut playbacks {
        let Some(duration) = playback.duration.filter(|d| d.is_finite()) else {
            continue;
        };
        let result = playback.advance(dt, duration);
        if result.laps != 0 {
            commands.trigger(PlaybackLooped { entity });
        }
        if result.finished {
            commands.trigger(PlaybackFinished { entity });
        }
    }
}
