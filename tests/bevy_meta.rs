//! `.meta` files with settings that do not fit: the asset loads with the settings that could be
//! read, each field that could not keeps its default, and each problem is reported with the
//! file and the field (in the log, as an error, and in the asset's warnings).

use crate::bevy_dan::lamp;
use crate::bevy_dff::{dff_app_with, skin_txd};
use crate::bevy_ifp::{app, lift_ifp, load, load_error};
use crate::dff_read::{BASE, clump};
use bevy::asset::meta::{AssetAction, AssetMeta, AssetMetaDyn};
use bevy::prelude::*;
use rigplay::plugin::*;
use rigplay::skeleton::GtaGame;

/// A `.meta` file for `loader` with these settings.
fn meta(loader: &str, settings: &str) -> String {
    format!(
        r#"(
    meta_format_version: "1.0",
    asset: Load(
        loader: "rigplay::plugin::{loader}",
        settings: {settings},
    ),
)"#
    )
}

#[test]
fn an_ifp_meta_with_a_bad_game_a_bad_clip_and_an_unknown_field_still_loads() {
    // `lift` is set right; `other` names a clip the file lacks, with a string for a bool;
    // `skeleton` names no game; `colour` is no setting.
    let text = meta(
        "IfpLoader",
        r#"(
            skeleton: Some(Xx),
            clips: {
                "lift": (looping: false, root_motion: Extract(z: false)),
                "other": (looping: "yes"),
            },
            colour: 3,
        )"#,
    );
    let mut app = app(&[("test.ifp", lift_ifp())], &[("test.ifp", &text)], 0.1);
    let handle: Handle<Ifp> = load(&mut app, "test.ifp");
    let ifp = app.world().resource::<Assets<Ifp>>().get(&handle).unwrap();
    // The clip that was set right plays as set; the game is picked from the file (ANP3: SA).
    assert!(!ifp.clips[0].settings.looping);
    assert_eq!(
        ifp.clips[0].settings.root_motion,
        RootMotionMode::Extract { z: false }
    );
    assert_eq!(ifp.game, GtaGame::Sa);
    let warnings: Vec<&str> = ifp
        .warnings
        .iter()
        .map(String::as_str)
        .filter(|w| w.starts_with("test.ifp.meta: "))
        .collect();
    assert_eq!(
        warnings,
        [
            "test.ifp.meta: settings field `skeleton`: expected `None` or `Some(Sa)`, \
             `Some(Vc)`, `Some(Iii)`, found Some(\"Xx\"); the default (None) is used",
            "test.ifp.meta: settings field `clips.\"other\"`: expected clip settings \
             `(looping: bool, root_motion: Baked | InPlace | Extract(z: bool))`, found \
             {looping: \"yes\"}; the entry is left out",
            "test.ifp.meta: settings field `colour`: no such setting (the settings are \
             skeleton, default_clip, clips); ignored",
        ]
    );
}

#[test]
fn a_dan_meta_with_a_bad_scale_keeps_its_bone_names() {
    let text = meta(
        "DanLoader",
        r#"(scale: "big", bone_names: ["Base", "Arm1"], looping: false, bone_links: [None, "up"])"#,
    );
    let mut app = app(&[("lamp.dan", lamp())], &[("lamp.dan", &text)], 0.1);
    let handle: Handle<Dan> = load(&mut app, "lamp.dan");
    let dan = app.world().resource::<Assets<Dan>>().get(&handle).unwrap();
    assert_eq!(dan.settings.scale, 1.0, "the default scale");
    assert_eq!(dan.bone_names[..3], ["Base", "Arm1", "bone_2"]);
    assert!(!dan.settings.looping);
    assert!(dan.settings.bone_links.is_empty());
    assert_eq!(dan.settings.meta_problems.0.len(), 2);
    assert_eq!(
        dan.warnings[..2],
        [
            "lamp.dan.meta: settings field `scale`: expected a number, found \"big\"; the \
             default (1.0) is used",
            "lamp.dan.meta: settings field `bone_links`: expected a list of parents `[None, \
             Some(0), …]`, found [None, \"up\"]; the default ([]) is used",
        ]
    );
}

#[test]
fn a_dff_meta_with_a_bad_flag_still_finds_the_dictionary_beside_the_model() {
    let text = meta("DffLoader", r#"(txd_beside: "no", game: Some(Vc), lod: 2)"#);
    let mut app = dff_app_with(
        &[
            ("models/fixture.dff", clump(BASE)),
            ("models/fixture.txd", skin_txd()),
        ],
        &[("models/fixture.dff", &text)],
    );
    let handle: Handle<Dff> = load(&mut app, "models/fixture.dff");
    let model = app.world().resource::<Assets<Dff>>().get(&handle).unwrap();
    // `txd_beside` kept its default (true), `game` was read.
    assert_eq!(model.dictionaries, ["models/fixture.txd"]);
    assert_eq!(model.game, GtaGame::Vc);
    let meta_lines: Vec<&String> = model
        .warnings
        .iter()
        .filter(|w| w.starts_with("models/fixture.dff.meta: "))
        .collect();
    assert_eq!(meta_lines.len(), 2, "{:?}", model.warnings);
    assert!(meta_lines[0].contains(
        "`txd_beside`: expected `true` or `false`, found \"no\"; the default (true) is used"
    ));
    assert!(meta_lines[1].contains("`lod`: no such setting"));
}

#[test]
fn anie_settings_read_through_bevys_meta_keep_the_default_for_a_bad_flag() {
    // What Bevy does with an `.anie`'s `.meta` before the loader runs.
    let read = |settings: &str| {
        AssetMeta::<AnieLoader, ()>::deserialize(meta("AnieLoader", settings).as_bytes()).map(|m| {
            match m.asset {
                AssetAction::Load { settings, .. } => settings,
                _ => unreachable!("a Load action"),
            }
        })
    };
    let good = read("(stored_influences: true)").unwrap();
    assert!(good.stored_influences && good.meta_problems.is_empty());
    let bad = read("(stored_influences: 1, frames: 3)").unwrap();
    assert!(!bad.stored_influences);
    let lines: Vec<String> = bad
        .meta_problems
        .0
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        lines,
        [
            "settings field `stored_influences`: expected `true` or `false`, found 1; the \
             default (false) is used",
            "settings field `frames`: no such setting (the settings are stored_influences); \
             ignored",
        ]
    );
    // An empty settings tuple is every default.
    assert_eq!(read("()").unwrap(), AnieLoaderSettings::default());
}

#[test]
fn settings_written_by_bevy_read_back_the_same_with_no_problems() {
    // The `.meta` Bevy writes for a loader's settings (what `AssetServer::write_default_meta`
    // does, here with settings that are not the defaults).
    let settings = DanLoaderSettings {
        scale: 0.0254,
        bone_names: vec!["Bip01".into(), "Bip01 Spine".into()],
        looping: false,
        bone_links: vec![None, Some(0)],
        ..default()
    };
    let written = AssetMeta::<DanLoader, ()>::new(AssetAction::Load {
        loader: "rigplay::plugin::DanLoader".into(),
        settings: settings.clone(),
    })
    .serialize();
    let back = AssetMeta::<DanLoader, ()>::deserialize(&written).unwrap();
    let AssetAction::Load { settings: read, .. } = back.asset else {
        unreachable!()
    };
    assert_eq!(read, settings);
    assert!(read.meta_problems.is_empty());

    let mut ifp = IfpLoaderSettings {
        skeleton: Some(GtaGame::Vc),
        ..default()
    };
    ifp.clips.insert(
        "walk_civi".into(),
        ClipSettings {
            looping: false,
            root_motion: RootMotionMode::Extract { z: true },
        },
    );
    let written = AssetMeta::<IfpLoader, ()>::new(AssetAction::Load {
        loader: "rigplay::plugin::IfpLoader".into(),
        settings: ifp,
    })
    .serialize();
    let back = AssetMeta::<IfpLoader, ()>::deserialize(&written).unwrap();
    let AssetAction::Load { settings: read, .. } = back.asset else {
        unreachable!()
    };
    assert!(read.meta_problems.is_empty(), "{:?}", read.meta_problems);
    assert_eq!(read.skeleton, Some(GtaGame::Vc));
    assert_eq!(
        read.for_clip("WALK_CIVI").root_motion,
        RootMotionMode::Extract { z: true }
    );
}

#[test]
fn a_meta_that_is_not_ron_fails_the_asset_with_its_path_and_the_app_runs_on() {
    // Bevy reads the loader's name before any rigplay code runs; a file it cannot parse there
    // fails the load (Bevy's behaviour), naming the file.
    let mut app = app(
        &[("test.ifp", lift_ifp()), ("good.ifp", lift_ifp())],
        &[(
            "test.ifp",
            "(meta_format_version: \"1.0\", asset: Load(loader: ",
        )],
        0.1,
    );
    let error = load_error::<Ifp>(&mut app, "test.ifp");
    assert!(error.contains("test.ifp"), "{error}");
    let _: Handle<Ifp> = load(&mut app, "good.ifp");
}
