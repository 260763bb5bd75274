// The DFF fuzz oracle, shared by the fuzz target (fuzz/fuzz_targets/dff_read.rs) and the
// regression tests (tests/dff_read.rs), which `include!` it.
//
// Any bytes: the reader returns an error or a model and never panics. A model that reads has
// valid indices everywhere (faces, materials, atomics' frames and geometries, skins' per-vertex
// arrays); its frames' world matrices and HAnim bones build; and every atomic's bind pose skins
// (or says why not) with one position per vertex. The model made ready to draw
// (rigplay::model, what the .dff loader and the glTF export use) builds, and every mesh of it
// has one value per vertex in every attribute, triangles whose indices are in range, weights
// summing to 1 on joints the skin has.

pub fn check_dff(data: &[u8]) {
    use rigplay::formats::dff::DffFile;

    let Ok(read) = DffFile::read(data) else { return };
    for w in &read.warnings {
        let _ = w.to_string();
    }
    for c in &read.file.clumps {
        assert_eq!(c.world_matrices().len(), c.frames.len());
        let _ = c.bones();
        for g in &c.geometries {
            for f in g.faces() {
                assert!(f.vertices.iter().all(|&v| (v as usize) < g.num_vertices), "face index");
                assert!((f.material as usize) < g.materials.len(), "face material");
            }
            if let Some(s) = &g.skin {
                assert_eq!(s.bone_indices.len(), g.num_vertices);
                assert_eq!(s.weights.len(), g.num_vertices);
                assert_eq!(s.inverse_bind.len(), s.num_bones);
                let _ = s.max_influences();
            }
        }
        for (i, a) in c.atomics.iter().enumerate() {
            assert!(a.frame < c.frames.len() && a.geometry < c.geometries.len(), "atomic");
            if let Ok(p) = c.skin_bind_pose(i) {
                assert_eq!(p.len(), c.geometries[a.geometry].positions().len());
            }
        }
    }
    let game = rigplay::skeleton::GtaGame::for_dff(&read.file);
    let model = rigplay::model::Model::new(&read.file, game, &[]);
    assert_eq!(model.clumps.len(), read.file.clumps.len());
    for g in model.geometries.iter().flatten() {
        let joints = g.skin.as_ref().map_or(0, |s| s.joints.len());
        for m in &g.meshes {
            let n = m.positions.len();
            assert!(m.indices.len() % 3 == 0 && m.indices.iter().all(|&i| (i as usize) < n));
            assert!(m.normals.as_ref().is_none_or(|v| v.len() == n), "normals");
            assert!(m.uvs.iter().flatten().all(|v| v.len() == n), "uvs");
            assert!(m.colours.as_ref().is_none_or(|v| v.len() == n), "colours");
            if let (Some(js), Some(ws)) = (&m.joints, &m.weights) {
                assert_eq!((js.len(), ws.len()), (n, n));
                for (j, w) in js.iter().zip(ws) {
                    assert!(j.iter().all(|&j| (j as usize) < joints.max(1)), "joint");
                    assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-4, "weights {w:?}");
                }
            }
            assert_eq!(m.smooth_normals().len(), n);
        }
    }
}
