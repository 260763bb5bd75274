//! [`PlayAnimation`]: the smallest way to play a clip with Bevy's own `AnimationPlayer`.

use super::{RigBone, RigClip};
use bevy::prelude::*;

/// Plays a clip on a character with Bevy's `AnimationPlayer` (the clip's
/// [`RigClip::animation`]): the clip starts, once loaded, and starts over when this changes;
/// bones it does not animate go back to their rest pose.
#[derive(Component, Debug, Clone)]
pub struct PlayAnimation {
    /// The clip to play.
    pub clip: Handle<RigClip>,
    /// Whether it loops (else it holds its last pose).
    pub repeat: bool,
    /// Play rate: 1 is normal speed.
    pub speed: f32,
}

impl PlayAnimation {
    /// Plays `clip` looped at normal speed.
    pub fn looping(clip: Handle<RigClip>) -> Self {
        Self {
            clip,
            repeat: true,
            speed: 1.0,
        }
    }

    /// Plays `clip` once, then holds its last pose.
    pub fn once(clip: Handle<RigClip>) -> Self {
        Self {
            clip,
            repeat: false,
            speed: 1.0,
        }
    }
}

/// The graph node [`PlayAnimation`] started, for systems that read the player's time.
#[derive(Component, Debug, Clone, Copy)]
pub struct PlayingNode(pub AnimationNodeIndex);

/// The clip [`start_animations`] started last on a character.
#[derive(Component)]
pub(crate) struct StartedClip(AssetId<RigClip>);

/// Starts each [`PlayAnimation`] that changed, or whose clip has loaded since.
pub(crate) fn start_animations(
    mut commands: Commands,
    mut players: Query<(
        Entity,
        Ref<PlayAnimation>,
        Option<&StartedClip>,
        Option<&mut AnimationPlayer>,
    )>,
    clips: Res<Assets<RigClip>>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
    children: Query<&Children>,
    mut bones: Query<(&RigBone, &mut Transform)>,
    mut waiting: Local<bool>,
) {
    // Nothing changed and no clip waits to load: the common frame checks nothing per character.
    if !*waiting && !clips.is_changed() && !players.iter().any(|(_, p, ..)| p.is_changed()) {
        return;
    }
    *waiting = false;
    for (entity, play, started, player) in &mut players {
        let id = play.clip.id();
        if !play.is_changed() && started.is_some_and(|s| s.0 == id) {
            continue;
        }
        let Some(clip) = clips.get(id) else {
            *waiting = true;
            continue;
        };
        let (graph, node) = AnimationGraph::from_clip(clip.animation.clone());
        let start = |player: &mut AnimationPlayer| {
            player.stop_all();
            let active = player.play(node);
            active.set_speed(play.speed);
            if play.repeat {
                active.repeat();
            }
        };
        let mut e = commands.entity(entity);
        e.insert((
            AnimationGraphHandle(graphs.add(graph)),
            PlayingNode(node),
            StartedClip(id),
        ));
        match player {
            Some(mut player) => start(&mut player),
            None => {
                let mut player = AnimationPlayer::default();
                start(&mut player);
                e.insert(player);
            }
        }
        // Bones the new clip does not animate go back to rest, not the last clip's pose.
        for bone in children.iter_descendants(entity) {
            if let Ok((rig, mut transform)) = bones.get_mut(bone) {
                *transform = rig.rest;
            }
        }
    }
}
