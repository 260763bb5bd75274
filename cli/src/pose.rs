//! `rigplay pose FILE --at SECONDS`: the sampled local transform of every bone of a clip.

use crate::load::{Loaded, load};
use crate::{Args, Failure, num, nums, usage};
use glam::{Quat, Vec3};
use rigplay::animation::{Clip, WrapMode};
use rigplay::coords::{
    bevy_quat_to_dan, bevy_scale_to_dan, bevy_vec_to_dan, gta_quat_to_bevy, gta_scale_to_bevy,
    gta_vec_to_bevy,
};
use rigplay::formats::dan::{DanClipOptions, DanRead};
use rigplay::formats::ifp::IfpRead;
use serde_json::json;

pub(crate) fn pose(a: Args) -> Result<(), Failure> {
    let [path] = a.positional.as_slice() else {
        return Err(usage("pose takes one FILE"));
    };
    let at = a
        .value("--at")
        .ok_or_else(|| usage("pose needs --at SECONDS"))?;
    let at: f32 = at
        .parse()
        .ok()
        .filter(|t: &f32| t.is_finite())
        .ok_or_else(|| usage(format!("--at takes seconds, not {at:?}")))?;
    let bevy = match a.value("--space").unwrap_or("file") {
        "file" => false,
        "bevy" => true,
        s => return Err(usage(format!("--space takes file or bevy, not {s:?}"))),
    };
    // Each format's values in its own axes, and its map to Bevy's.
    type ToBevy = (fn(Quat) -> Quat, fn(Vec3) -> Vec3, fn(Vec3) -> Vec3);
    let (clip, file_space, to_bevy): (Clip, bool, ToBevy) = match load(path)? {
        Loaded::Ifp(IfpRead { file: package, .. }) => {
            let clip_name = a
                .value("--clip")
                .ok_or_else(|| usage("pose needs --clip NAME for an .ifp"))?;
            // Matched as the games match names (case-insensitively); two clips differing
            // only in case are reported, not guessed between.
            let index = rigplay::animation::names::find_clip(
                package.clips().map(|c| c.name.as_str()),
                clip_name,
            )
            .map_err(|e| Failure(format!("{path}: {e}"), 1))?;
            let clip = package.clips().nth(index).expect("found among them");
            (
                clip.to_clip(),
                true,
                (gta_quat_to_bevy, gta_vec_to_bevy, gta_scale_to_bevy),
            )
        }
        Loaded::Dff(_) | Loaded::Txd(_) => {
            return Err(Failure(
                format!("{path}: pose is for .ifp and .dan; a RenderWare file holds no clip"),
                1,
            ));
        }
        Loaded::Anie(_) => {
            return Err(Failure(
                format!("{path}: pose is for .ifp and .dan; .anie projects render (see render)"),
                1,
            ));
        }
        // The DAN clip is in Bevy's axes already; file space is the stored axes.
        Loaded::Dan(DanRead { file, .. }) => (
            file.to_clip("", &DanClipOptions::default()),
            false,
            (|q| q, |v| v, |v| v),
        ),
    };
    let time = clip.wrap_time(
        at,
        if a.flag("--loop") {
            WrapMode::Loop
        } else {
            WrapMode::Clamp
        },
    );
    let mut bones = Vec::new();
    for (i, track) in clip.tracks().iter().enumerate() {
        let s = clip.sample_track(i, time);
        let (rotation, translation, scale) = match (bevy, file_space) {
            // IFP: the clip is in the file's axes.
            (false, true) | (true, false) => (s.rotation, s.translation, s.scale),
            (true, true) => (
                s.rotation.map(to_bevy.0),
                s.translation.map(to_bevy.1),
                s.scale.map(to_bevy.2),
            ),
            // DAN in the file's axes: the stored (x, y, z, w) and (x, y, z).
            (false, false) => (
                s.rotation.map(|q| Quat::from_array(bevy_quat_to_dan(q))),
                s.translation.map(|v| Vec3::from_array(bevy_vec_to_dan(v))),
                s.scale.map(|v| Vec3::from_array(bevy_scale_to_dan(v))),
            ),
        };
        bones.push((track, rotation, translation, scale));
    }
    if a.flag("--json") {
        let out = json!({
            "clip": clip.name,
            "time": num(time),
            "space": if bevy { "bevy" } else { "file" },
            "bones": bones.iter().map(|(t, r, tr, s)| json!({
                "name": t.bone.name,
                "id": t.bone.id,
                "rotation": r.map(|q| nums(&q.to_array())),
                "translation": tr.map(|v| nums(&v.to_array())),
                "scale": s.map(|v| nums(&v.to_array())),
            })).collect::<Vec<_>>(),
        });
        out!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        out!(
            "clip {:?} at {time} s ({} space)",
            clip.name,
            if bevy { "bevy" } else { "file" }
        );
        for (t, r, tr, s) in &bones {
            let fmt = |v: &[f32]| {
                v.iter()
                    .map(|x| format!("{x:9.5}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            out!(
                "  {:<24} rot [{}]{}{}",
                format!("{:?}", t.bone.name),
                r.map(|q| fmt(&q.to_array())).unwrap_or_default(),
                tr.map(|v| format!("  pos [{}]", fmt(&v.to_array())))
                    .unwrap_or_default(),
                s.map(|v| format!("  scale [{}]", fmt(&v.to_array())))
                    .unwrap_or_default()
            );
        }
    }
    Ok(())
}
