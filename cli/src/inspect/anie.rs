//! `rigplay inspect` for AnimeEffects projects: canvas, resources, the object tree with every
//! key.

use crate::{Failure, num, nums};
use rigplay::formats::anie::{
    AnieFile, AnieRead, Easing, EasingKind, EasingRange, KeyKind, KeyRef, KeySlot, NodeKind,
    ObjectNode, Spline, TimeKey,
};
use serde_json::{Value, json};

fn easing_name(e: &Easing) -> String {
    let range = match e.range {
        EasingRange::In => "In",
        EasingRange::Out => "Out",
        EasingRange::InOut => "InOut",
    };
    let mut s = format!("{:?} {range}", e.kind);
    if e.weight != 1.0 {
        s += &format!(" weight {}", e.weight);
    }
    if e.kind == EasingKind::Custom {
        s += &format!(" bezier {:?}", e.bezier);
    }
    s
}

fn easing_json(e: &Easing) -> Value {
    json!({
        "type": format!("{:?}", e.kind),
        "range": format!("{:?}", e.range),
        "weight": num(e.weight),
        "bezier": nums(&e.bezier),
    })
}

fn v2(v: glam::Vec2) -> String {
    format!("({}, {})", v.x, v.y)
}

/// One key: its text summary (without frame) and its JSON value.
struct KeyView {
    text: String,
    easing: Option<Easing>,
    value: Value,
}

fn key_views(
    project: &AnieFile,
    node: &ObjectNode,
    kind: KeyKind,
) -> Vec<(KeySlot, i32, KeyView, Vec<KeyRef>)> {
    let tl = &node.timeline;
    fn collect<T>(
        map: &rigplay::formats::anie::KeyMap<T>,
        view: impl Fn(&T) -> KeyView,
    ) -> Vec<(KeySlot, i32, KeyView, Vec<KeyRef>)> {
        map.slots()
            .map(|(slot, k): (KeySlot, &TimeKey<T>)| {
                (slot, k.frame, view(&k.value), k.children.clone())
            })
            .collect()
    }
    match kind {
        KeyKind::Move => collect(&tl.moves, |k| {
            let mut text = format!("pos {}", v2(k.pos));
            if k.centroid != glam::Vec2::ZERO {
                text += &format!(" centroid {}", v2(k.centroid));
            }
            if k.spline == Spline::CatmullRom {
                text += " Catmull-Rom";
            }
            KeyView {
                text,
                easing: Some(k.easing),
                value: json!({
                    "pos": nums(&k.pos.to_array()),
                    "centroid": nums(&k.centroid.to_array()),
                    "spline": format!("{:?}", k.spline),
                }),
            }
        }),
        KeyKind::Rotate => collect(&tl.rotates, |k| KeyView {
            text: format!("{} rad", k.rotate),
            easing: Some(k.easing),
            value: json!({ "rotate": num(k.rotate) }),
        }),
        KeyKind::Scale => collect(&tl.scales, |k| KeyView {
            text: v2(k.scale),
            easing: Some(k.easing),
            value: json!({ "scale": nums(&k.scale.to_array()) }),
        }),
        KeyKind::Depth => collect(&tl.depths, |k| KeyView {
            text: format!("{}", k.depth),
            easing: Some(k.easing),
            value: json!({ "depth": num(k.depth) }),
        }),
        KeyKind::Opa => collect(&tl.opacities, |k| KeyView {
            text: format!("{}", k.opacity),
            easing: Some(k.easing),
            value: json!({ "opacity": num(k.opacity) }),
        }),
        KeyKind::Bone => collect(&tl.bones, |k| {
            let bindings: usize = k.bones.iter().map(|b| b.binding_nodes.len()).sum();
            KeyView {
                text: format!(
                    "{} bones, {} stored influence caches, {bindings} bound nodes",
                    k.bones.len(),
                    k.caches.len()
                ),
                easing: None,
                value: json!({
                    "bones": k.bones.iter().map(|b| json!({
                        "parent": b.parent,
                        "world_pos": nums(&b.world_pos.to_array()),
                        "world_angle": num(b.world_angle),
                        "binding_nodes": b.binding_nodes,
                    })).collect::<Vec<_>>(),
                    "caches": k.caches.iter().map(|c| c.node).collect::<Vec<_>>(),
                    "cache_owner": k.cache_owner,
                }),
            }
        }),
        KeyKind::Pose => collect(&tl.poses, |k| KeyView {
            text: format!(
                "{} bones, rotate {:?}",
                k.bones.len(),
                k.bones.iter().map(|b| b.rotate).collect::<Vec<_>>()
            ),
            easing: Some(k.easing),
            value: json!({ "rotate": k.bones.iter().map(|b| num(b.rotate)).collect::<Vec<_>>() }),
        }),
        KeyKind::Mesh => collect(&tl.meshes, |k| KeyView {
            text: format!("{} vertices, {} faces", k.vertices.len(), k.faces.len()),
            easing: None,
            value: json!({ "vertices": k.vertices.len(), "faces": k.faces.len() }),
        }),
        KeyKind::Ffd => collect(&tl.ffds, |k| KeyView {
            text: format!("{} vertex positions", k.positions.len()),
            easing: Some(k.easing),
            value: json!({ "vertices": k.positions.len() }),
        }),
        KeyKind::Image => collect(&tl.images, |k| {
            let resource = k.resource.and_then(|r| project.resource(r));
            let name = resource.map_or("(none)".to_owned(), |r| format!("{:?}", r.identifier));
            let id = String::from_utf8_lossy(&k.blend_mode.id()).into_owned();
            KeyView {
                text: format!(
                    "image {name}, blend {id:?}, offset {}, mesh {} vertices {} triangles",
                    v2(k.image_offset),
                    k.mesh.positions.len(),
                    k.mesh.indices.len() / 3
                ),
                easing: None,
                value: json!({
                    "resource": resource.map(|r| r.identifier.as_str()),
                    "blend": id,
                    "image_offset": nums(&k.image_offset.to_array()),
                    "mesh_vertices": k.mesh.positions.len(),
                    "mesh_triangles": k.mesh.indices.len() / 3,
                }),
            }
        }),
        KeyKind::Hsv => collect(&tl.hsvs, |k| KeyView {
            text: format!(
                "hue {} sat {} val {}{}",
                k.hue,
                k.sat,
                k.val,
                if k.absolute { " absolute" } else { "" }
            ),
            easing: Some(k.easing),
            value: json!({ "hue": k.hue, "sat": k.sat, "val": k.val, "absolute": k.absolute }),
        }),
    }
}

fn child_names(project: &AnieFile, children: &[KeyRef]) -> Vec<String> {
    children
        .iter()
        .map(|c| match project.key_frame(*c) {
            Some(f) if f >= 0 => format!("{}@{f}", c.kind),
            _ => format!("{} (default)", c.kind),
        })
        .collect()
}

/// Depth of each object node in the tree (root 0), by the pre-order parent links.
fn depths(project: &AnieFile) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::with_capacity(project.objects.len());
    for (i, n) in project.objects.iter().enumerate() {
        let d = n.parent.filter(|&p| p < i).map_or(0, |p| out[p] + 1);
        out.push(d);
    }
    out
}

pub(crate) fn inspect(path: &str, read: &AnieRead, as_json: bool) -> Result<(), Failure> {
    let p = &read.file;
    if as_json {
        let resources: Vec<Value> = p
            .resources
            .iter()
            .map(|t| {
                json!({
                    "file": t.file_path,
                    "nodes": t.nodes.iter().map(|n| json!({
                        "name": n.identifier,
                        "layer": n.is_layer,
                        "parent": n.parent,
                        "width": n.image.as_ref().map(|i| i.width),
                        "height": n.image.as_ref().map(|i| i.height),
                        "blend": String::from_utf8_lossy(&n.blend_mode.id()),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let objects: Vec<Value> = p
            .objects
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut keys = serde_json::Map::new();
                for kind in KeyKind::ALL {
                    let views = key_views(p, n, kind);
                    if views.is_empty() {
                        continue;
                    }
                    let list: Vec<Value> = views
                        .into_iter()
                        .map(|(slot, frame, view, children)| {
                            let mut k = json!({
                                "frame": (slot != KeySlot::Default).then_some(frame),
                                "default": slot == KeySlot::Default,
                                "value": view.value,
                            });
                            if let Some(e) = view.easing {
                                k["easing"] = easing_json(&e);
                            }
                            if !children.is_empty() {
                                k["children"] = json!(child_names(p, &children));
                            }
                            k
                        })
                        .collect();
                    keys.insert(kind.name().into(), Value::Array(list));
                }
                json!({
                    "index": i,
                    "name": n.name,
                    "kind": match n.kind { NodeKind::Layer => "layer", NodeKind::Folder => "folder" },
                    "parent": n.parent,
                    "children": n.children,
                    "visible": n.visible,
                    "clipped": n.clipped,
                    "keys": keys,
                })
            })
            .collect();
        let out = json!({
            "file": path,
            "format": "ANIE",
            "version": read.version.to_string(),
            "canvas": { "width": p.canvas_width, "height": p.canvas_height },
            "max_frame": p.max_frame,
            "fps": p.fps,
            "loop": p.looping,
            "resources": resources,
            "objects": objects,
            "warnings": read.warnings.iter().map(|w| json!({"offset": w.offset, "message": w.to_string()})).collect::<Vec<_>>(),
        });
        out!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    out!(
        "{path}: AnimeEffects project {}, canvas {}×{}, frames 0..={} at {} fps, loop {}",
        read.version,
        p.canvas_width,
        p.canvas_height,
        p.max_frame,
        p.fps,
        if p.looping { "on" } else { "off" }
    );
    out!("resources:");
    for t in &p.resources {
        out!("  {:?}", t.file_path);
        let mut depth: Vec<usize> = Vec::with_capacity(t.nodes.len());
        for (i, n) in t.nodes.iter().enumerate() {
            let d = n.parent.filter(|&q| q < i).map_or(0, |q| depth[q] + 1);
            depth.push(d);
            let what = match &n.image {
                Some(img) => format!(
                    "{}×{} {:?}",
                    img.width,
                    img.height,
                    String::from_utf8_lossy(&n.blend_mode.id())
                ),
                None if n.is_layer => "layer without image".to_owned(),
                None => "folder".to_owned(),
            };
            out!("    {}{:?} {what}", "  ".repeat(d), n.identifier);
        }
    }
    out!("objects:");
    let depth = depths(p);
    for (i, n) in p.objects.iter().enumerate() {
        let indent = "  ".repeat(depth[i] + 1);
        let mut flags = String::new();
        if !n.visible {
            flags += " hidden";
        }
        if n.clipped {
            flags += " clipped";
        }
        out!(
            "{indent}#{i} {} {:?}{flags}",
            match n.kind {
                NodeKind::Layer => "layer",
                NodeKind::Folder => "folder",
            },
            n.name
        );
        for kind in KeyKind::ALL {
            for (slot, frame, view, children) in key_views(p, n, kind) {
                let at = match slot {
                    KeySlot::Default => "default".to_owned(),
                    KeySlot::At(_) => format!("@{frame}"),
                };
                let easing = view
                    .easing
                    .filter(|e| *e != Easing::default() && slot != KeySlot::Default)
                    .map(|e| format!(" [{}]", easing_name(&e)))
                    .unwrap_or_default();
                let children = if children.is_empty() {
                    String::new()
                } else {
                    format!(" → {}", child_names(p, &children).join(", "))
                };
                out!(
                    "{indent}  {:<6} {at:<8} {}{easing}{children}",
                    kind.name(),
                    view.text
                );
            }
        }
    }
    if !read.warnings.is_empty() {
        out!("warnings:");
        for w in &read.warnings {
            out!("  {w}");
        }
    }
    Ok(())
}
