//! Motion-capture files written for the tests (the reader's and the import's, and the
//! command-line tool's).

use std::fmt::Write as _;

/// A mocap skeleton as mocap libraries name it (Mixamo's names without a prefix: Hips,
/// LeftUpLeg, LeftForeArm, …), in centimetres, +Y up, facing +Z, in a T pose; and a walk of
/// `frames` frames at 30 a second: legs and arms swinging, the spine twisting, the hips
/// bobbing and moving forward 1 m/s.
pub fn mocap_walk(frames: usize) -> String {
    // (name, parent, offset)
    let joints: [(&str, Option<usize>, [f32; 3]); 22] = [
        ("Hips", None, [0.0, 95.0, 0.0]),
        ("Spine", Some(0), [0.0, 9.0, 0.5]),
        ("Spine1", Some(1), [0.0, 11.0, 0.0]),
        ("Spine2", Some(2), [0.0, 12.0, -0.5]),
        ("Neck", Some(3), [0.0, 15.0, 0.0]),
        ("Head", Some(4), [0.0, 9.0, 1.0]),
        ("LeftShoulder", Some(3), [6.0, 11.0, 0.0]),
        ("LeftArm", Some(6), [12.0, 0.0, 0.0]),
        ("LeftForeArm", Some(7), [27.0, 0.0, 0.0]),
        ("LeftHand", Some(8), [25.0, 0.0, 0.0]),
        ("RightShoulder", Some(3), [-6.0, 11.0, 0.0]),
        ("RightArm", Some(10), [-12.0, 0.0, 0.0]),
        ("RightForeArm", Some(11), [-27.0, 0.0, 0.0]),
        ("RightHand", Some(12), [-25.0, 0.0, 0.0]),
        ("LeftUpLeg", Some(0), [9.0, -6.0, 0.0]),
        ("LeftLeg", Some(14), [0.0, -42.0, 0.0]),
        ("LeftFoot", Some(15), [0.0, -40.0, 0.0]),
        ("LeftToeBase", Some(16), [0.0, -6.0, 12.0]),
        ("RightUpLeg", Some(0), [-9.0, -6.0, 0.0]),
        ("RightLeg", Some(18), [0.0, -42.0, 0.0]),
        ("RightFoot", Some(19), [0.0, -40.0, 0.0]),
        ("RightToeBase", Some(20), [0.0, -6.0, 12.0]),
    ];
    let mut s = String::from("HIERARCHY\n");
    fn write_joint(
        s: &mut String,
        joints: &[(&str, Option<usize>, [f32; 3])],
        j: usize,
        depth: usize,
    ) {
        let pad = "  ".repeat(depth);
        let (name, parent, o) = joints[j];
        let kind = if parent.is_none() { "ROOT" } else { "JOINT" };
        let _ = writeln!(
            s,
            "{pad}{kind} {name}\n{pad}{{\n{pad}  OFFSET {} {} {}",
            o[0], o[1], o[2]
        );
        if parent.is_none() {
            let _ = writeln!(
                s,
                "{pad}  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
            );
        } else {
            let _ = writeln!(s, "{pad}  CHANNELS 3 Zrotation Xrotation Yrotation");
        }
        let children: Vec<usize> = (0..joints.len())
            .filter(|&c| joints[c].1 == Some(j))
            .collect();
        if children.is_empty() {
            let _ = writeln!(
                s,
                "{pad}  End Site\n{pad}  {{\n{pad}    OFFSET 0 -5 0\n{pad}  }}"
            );
        }
        for c in children {
            write_joint(s, joints, c, depth + 1);
        }
        let _ = writeln!(s, "{pad}}}");
    }
    write_joint(&mut s, &joints, 0, 0);
    // Depth-first order of the joints as written: the channel order of each row.
    fn order(joints: &[(&str, Option<usize>, [f32; 3])], j: usize, out: &mut Vec<usize>) {
        out.push(j);
        for c in (0..joints.len()).filter(|&c| joints[c].1 == Some(j)) {
            order(joints, c, out);
        }
    }
    let mut written = Vec::new();
    order(&joints, 0, &mut written);
    let _ = writeln!(s, "MOTION\nFrames: {frames}\nFrame Time: 0.0333333");
    for f in 0..frames {
        let t = f as f32 / 30.0;
        let phase = (t / 1.2 * std::f32::consts::TAU).sin();
        let rows: Vec<String> = written
            .iter()
            .map(|&j| {
                // (z, x, y) rotations in degrees.
                let (z, x, y) = match joints[j].0 {
                    "Spine" => (0.0, 3.0, 8.0 * phase),
                    "Neck" => (0.0, -4.0, -5.0 * phase),
                    // Arms down from the T pose, swinging against the legs.
                    "LeftArm" => (-70.0, -25.0 * phase, 0.0),
                    "RightArm" => (70.0, 25.0 * phase, 0.0),
                    "LeftForeArm" => (0.0, 0.0, -20.0 - 10.0 * phase),
                    "RightForeArm" => (0.0, 0.0, 20.0 - 10.0 * phase),
                    "LeftUpLeg" => (0.0, 30.0 * phase, 0.0),
                    "RightUpLeg" => (0.0, -30.0 * phase, 0.0),
                    "LeftLeg" => (0.0, 25.0 * (1.0 - phase), 0.0),
                    "RightLeg" => (0.0, 25.0 * (1.0 + phase), 0.0),
                    "LeftFoot" => (0.0, -10.0 * phase, 0.0),
                    "RightFoot" => (0.0, 10.0 * phase, 0.0),
                    _ => (0.0, 0.0, 0.0),
                };
                if joints[j].1.is_none() {
                    let bob = 95.0 + 2.0 * (2.0 * t / 1.2 * std::f32::consts::TAU).cos();
                    format!("0 {bob:.4} {:.4} {z:.4} {x:.4} {y:.4}", 100.0 * t)
                } else {
                    format!("{z:.4} {x:.4} {y:.4}")
                }
            })
            .collect();
        let _ = writeln!(s, "{}", rows.join(" "));
    }
    s
}
