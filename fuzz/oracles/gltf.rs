// The glTF reader's fuzz oracle, shared by the fuzz target (fuzz/fuzz_targets/gltf_read.rs) and
// the regression tests (tests/gltf_import.rs), which `include!` it.
//
// Any bytes: the reader returns an error or a scene and never panics; every node's parent is
// another node, every animation track drives a node, every skin's joints are nodes with a matrix
// each, and the bind pose has a transform per node; and importing each animation onto a GTA ped
// gives a clip or an error, never a panic.

pub fn check_gltf(data: &[u8]) {
    use rigplay::convert::import::{clip_to_gta, gltf_source};
    use rigplay::formats::gltf::GltfScene;
    use rigplay::skeleton::GtaGame;

    let Ok(read) = GltfScene::read(data, |_| None) else { return };
    let scene = read.scene;
    for (i, n) in scene.nodes.iter().enumerate() {
        assert!(n.parent.is_none_or(|p| p < scene.nodes.len() && p != i));
    }
    for skin in &scene.skins {
        assert_eq!(skin.joints.len(), skin.inverse_bind.len());
        assert!(skin.joints.iter().all(|&j| j < scene.nodes.len()));
    }
    assert_eq!(scene.bind_pose().len(), scene.nodes.len());
    for a in &scene.animations {
        assert_eq!(a.nodes.len(), a.clip.tracks().len());
        assert!(a.nodes.iter().all(|&n| n < scene.nodes.len()));
        if a.clip.key_count() > 100_000 || a.clip.duration() > 60.0 {
            continue;
        }
        if let Ok((source, clip)) = gltf_source(&scene, a) {
            let _ = clip_to_gta(&source, &clip, "fuzz", GtaGame::Vc, &[]);
        }
    }
}
