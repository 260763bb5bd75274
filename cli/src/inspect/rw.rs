//! `rigplay inspect` of RenderWare files: a model's (`.dff`) clumps, frames and bones,
//! geometries, materials, skins and atomics; a texture dictionary's (`.txd`) textures with their
//! formats, sizes and mip levels.

use crate::{Failure, num};
use rigplay::formats::dff::{Clump, DffRead};
use rigplay::formats::txd::TxdRead;
use rigplay::skeleton::{GtaGame, RestDifference, Skeleton};
use serde_json::{Value, json};

/// `0xVJNBB` as `3.6.0.3`.
fn version(v: u32) -> String {
    format!(
        "{}.{}.{}.{}",
        (v >> 16) & 0xF,
        (v >> 12) & 0xF,
        (v >> 8) & 0xF,
        v & 0xFF
    )
}

/// How a clump's bind pose differs from the built-in skeleton of `game` (bone offsets and
/// rotations in their parents' space); `None` without an HAnim hierarchy.
fn against_built_in(c: &Clump, game: GtaGame) -> Option<RestDifference> {
    Some(Skeleton::from_dff(c, game)?.rest_difference(&game.skeleton()))
}

fn difference_json(d: &RestDifference, game: GtaGame) -> Value {
    json!({
        "skeleton": format!("{game:?}"),
        "matched": d.bones.len(),
        "max_translation": d.max_translation.as_ref().map(|(v, b)| json!({"metres": num(*v), "bone": b})),
        "max_rotation": d.max_rotation.as_ref().map(|(v, b)| json!({"degrees": num(v.to_degrees()), "bone": b})),
        "root_rotation_degrees": d.root_rotation.map(|r| num(r.to_degrees())),
        "missing_in_built_in": d.missing_in_other,
        "missing_in_model": d.missing_in_self,
    })
}

fn clump_json(c: &Clump, game: GtaGame) -> Value {
    let bones = c.bones().unwrap_or_default();
    json!({
        "built_in_difference": against_built_in(c, game).map(|d| difference_json(&d, game)),
        "version": version(c.version),
        "frames": c.frames.iter().enumerate().map(|(i, f)| json!({
            "index": i,
            "name": f.name,
            "parent": f.parent,
            "position": [num(f.position.x), num(f.position.y), num(f.position.z)],
            "bone_id": f.hanim.as_ref().map(|h| h.node_id),
        })).collect::<Vec<_>>(),
        "bones": bones.iter().map(|b| json!({
            "id": b.node_id, "frame": b.frame, "parent": b.parent,
        })).collect::<Vec<_>>(),
        "geometries": c.geometries.iter().map(|g| json!({
            "vertices": g.num_vertices,
            "triangles": g.faces().len(),
            "uv_sets": g.uv_sets.len(),
            "prelit": g.prelit.is_some(),
            "normals": g.normals().is_some(),
            "bin_mesh": g.bin_mesh.is_some(),
            "materials": g.materials.iter().map(|m| json!({
                "colour": m.colour,
                "texture": m.texture.as_ref().map(|t| &t.name),
            })).collect::<Vec<_>>(),
            "skin": g.skin.as_ref().map(|s| json!({
                "bones": s.num_bones, "max_weights": s.max_influences(),
            })),
        })).collect::<Vec<_>>(),
        "atomics": c.atomics.iter().map(|a| json!({
            "frame": a.frame, "geometry": a.geometry,
        })).collect::<Vec<_>>(),
    })
}

pub(crate) fn dff(path: &str, read: &DffRead, as_json: bool) -> Result<(), Failure> {
    let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    let game = GtaGame::for_dff(&read.file);
    if as_json {
        let out = json!({
            "file": path,
            "format": "DFF",
            "clumps": read.file.clumps.iter().map(|c| clump_json(c, game)).collect::<Vec<_>>(),
            "warnings": warnings,
        });
        out!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    out!(
        "{path}: RenderWare model, {} clump(s)",
        read.file.clumps.len()
    );
    for (k, c) in read.file.clumps.iter().enumerate() {
        let bones = c.bones().unwrap_or_default();
        out!(
            "  clump {k}: RW {}, {} frames, {} bones, {} geometries, {} atomics",
            version(c.version),
            c.frames.len(),
            bones.len(),
            c.geometries.len(),
            c.atomics.len()
        );
        for (i, f) in c.frames.iter().enumerate() {
            let id = f
                .hanim
                .as_ref()
                .map(|h| format!(" bone id {}", h.node_id))
                .unwrap_or_default();
            out!(
                "    frame {i:<3} {:24} parent {:<4}{id}",
                format!("{:?}", f.name.as_deref().unwrap_or("")),
                f.parent.map_or("-".into(), |p| p.to_string())
            );
        }
        for (i, g) in c.geometries.iter().enumerate() {
            let triangles = g.faces().len();
            let skin = g
                .skin
                .as_ref()
                .map(|s| {
                    format!(
                        ", skin of {} bones ({} weights)",
                        s.num_bones,
                        s.max_influences()
                    )
                })
                .unwrap_or_default();
            out!(
                "    geometry {i}: {} vertices, {triangles} triangles, {} UV sets{}{}{skin}",
                g.num_vertices,
                g.uv_sets.len(),
                if g.prelit.is_some() { ", prelit" } else { "" },
                if g.bin_mesh.is_some() {
                    ", Bin Mesh"
                } else {
                    ""
                },
            );
            for (m, mat) in g.materials.iter().enumerate() {
                out!(
                    "      material {m}: colour {:?}, texture {:?}",
                    mat.colour,
                    mat.texture.as_ref().map(|t| t.name.as_str()).unwrap_or("")
                );
            }
        }
        for (i, a) in c.atomics.iter().enumerate() {
            out!("    atomic {i}: frame {}, geometry {}", a.frame, a.geometry);
        }
        if let Some(d) = against_built_in(c, game) {
            let at = |m: &Option<(f32, String)>, degrees: bool| match m {
                Some((v, b)) if degrees => format!("{:.3}° ({b:?})", v.to_degrees()),
                Some((v, b)) => format!("{v:.4} m ({b:?})"),
                None => "-".into(),
            };
            out!(
                "    bind pose vs the built-in {game:?} skeleton: {} bones matched, offsets differ by up to {}, rotations by up to {}",
                d.bones.len(),
                at(&d.max_translation, false),
                at(&d.max_rotation, true)
            );
            if let Some(r) = d.root_rotation {
                out!(
                    "      root turned {:.1}° from the clips' rest (the file's bind; clips set the root)",
                    r.to_degrees()
                );
            }
            if !d.missing_in_other.is_empty() {
                out!(
                    "      bones the built-in skeleton lacks: {:?}",
                    d.missing_in_other
                );
            }
            if !d.missing_in_self.is_empty() {
                out!(
                    "      built-in bones the model lacks: {:?}",
                    d.missing_in_self
                );
            }
        }
    }
    for w in &warnings {
        out!("  warning: {w}");
    }
    Ok(())
}

pub(crate) fn txd(path: &str, read: &TxdRead, as_json: bool) -> Result<(), Failure> {
    let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
    let format = |t: &rigplay::formats::txd::TextureNative| {
        t.pixel_format()
            .map(|f| format!("{f:?}"))
            .unwrap_or_else(|e| format!("unsupported ({e})"))
    };
    if as_json {
        let out = json!({
            "file": path,
            "format": "TXD",
            "textures": read.file.textures.iter().map(|t| json!({
                "name": t.name,
                "mask": t.mask,
                "pixel_format": format(t),
                "width": t.width,
                "height": t.height,
                "depth": t.depth,
                "levels": t.levels.len(),
                "platform": t.platform,
            })).collect::<Vec<_>>(),
            "warnings": warnings,
        });
        out!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    out!(
        "{path}: RenderWare texture dictionary, {} texture(s)",
        read.file.textures.len()
    );
    for t in &read.file.textures {
        out!(
            "  {:24} {}×{} {}, {} level(s), D3D{}{}",
            format!("{:?}", t.name),
            t.width,
            t.height,
            format(t),
            t.levels.len(),
            t.platform,
            if t.mask.is_empty() {
                String::new()
            } else {
                format!(", mask {:?}", t.mask)
            }
        );
    }
    for w in &warnings {
        out!("  warning: {w}");
    }
    Ok(())
}
