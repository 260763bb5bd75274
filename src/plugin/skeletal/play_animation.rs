//! [`PlayAnimation`]: the smallest way to play a clip with Bevy's own `AnimationPlayer`.

use super::RigBone;
use bevy::prelude::*;

/// Plays a clip on a character with Bevy's `AnimationPlayer`: the clip starts over when this
/// changes, and bones it does not animate go back to their rest pose.
#[derive(Component, Debug, Clone)]
pub struct PlayAnimation {
    /// The clip to play.
    pub clip: Handle<AnimationClip>,
    /// Whether it loops (else it holds its last pose).
    pub repeat: bool,
    /// Play rate: 1 is normal speed.
    pub speed: f32,
}

impl PlayAnimation {
    /// Plays `clip` looped at normal speed.
    pub fn looping(clip: Handle<AnimationClip>) -> Self {
        Self {
            clip,
            repeat: true,
            speed: 1.0,
        }
    }

    /// Plays `clip` once, then holds its last pose.
    pub fn once(clip: Handle<AnimationClip>) -> Self {
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

pub(crate) fn start_animations(
    mut commands: Commands,
    mut players: Query<
        (Entity, &PlayAnimation, Option<&mut AnimationPlayer>),
        Changed<PlayAnimation>,
    >,
    mut graphs: ResMut<Assets<AnimationGraph>>,
    children: Query<&Children>,
    mut bones: Query<(&RigBone, &mut Transform)>,
) {
    for (entity, play, player) in &mut players {
        let (graph, node) = AnimationGraph::from_clip(play.clip.clone());
        let start = |player: &mut AnimationPlayer| {
            player.stop_all();
            let active = player.play(node);
            active.set_speed(play.speed);
            if play.repeat {
                active.repeat();
            }
        };
        let mut e = commands.entity(entity);
        e.insert((AnimationGraphHandle(graphs.add(graph)), PlayingNode(node)));
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
