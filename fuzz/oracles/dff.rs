// The DFF fuzz oracle, shared by the fuzz target (fuzz/fuzz_targets/dff_read.rs) and the
// regression tests (tests/dff_read.rs), which `include!` it.
//
// Any bytes: the reader returns an error or a model and never panics. A model that reads has
// valid indices everywhere (faces, materials, atomics' frames and geometries, skins' per-vertex
// arrays); its frames' world matrices and HAnim bones build; and every atomic's bind pose skins
// (or says why not) with one position per vertex.

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
}
