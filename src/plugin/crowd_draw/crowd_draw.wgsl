// Crowd characters drawn by instanced skinning (rigplay's `CrowdDrawPlugin`): the vertex stage of
// Bevy's mesh pipeline (`bevy_pbr/src/render/mesh.wgsl` and `prepass/prepass.wgsl`), where the
// world-from-local matrix is the character's transform times its skin, read from two storage
// buffers instead of a `SkinnedMesh`'s joints. The fragment stage is StandardMaterial's own.
//
// - `crowd_bones`: two or three frames of rows (this frame's from row `current` on, last
//   frame's from row `previous` on, for motion vectors, and, where far characters may be posed at
//   half rate, the frame before last's from row `before_last` on), each of `slots` rows of the
//   characters' places in the world (their `GlobalTransform`s; a part's own is the identity),
//   then `slots` slots of `stride` bones (model space, Bevy's axes). A character's slot is its
//   parts' `MeshTag`. Then, from row `held`, a mark per slot (12 a row) saying which frame's rows
//   hold its bones this frame and last frame: a slot held at half rate (`CrowdLod`) is not
//   written that frame.
// - `crowd_joints`: the model's skin, per joint its bone in the crowd skeleton and its inverse
//   bind matrix.
// A joint's skin matrix is `bones[first + joint.bone] * joint.inverse_bind`, the matrix
// `CrowdSkinPose` holds on the CPU, `first` being the slot's first bone; for a joint of no bone
// (`STILL_JOINT`: it stays put in the character), `joint.inverse_bind` alone.

#import bevy_pbr::{mesh_functions, view_transformations::position_world_to_clip}
#import bevy_render::maths::affine3_to_square

#ifdef PREPASS_PIPELINE
#import bevy_pbr::prepass_io::VertexOutput
#else
#import bevy_pbr::forward_io::VertexOutput
#endif

// The bone of a joint that stays put in its character (`parts.rs`' `STILL_JOINT`).
const STILL_JOINT: u32 = 0xffffffffu;

struct CrowdJoint {
    // Rows of the 3×4 affine matrix, as Bevy stores mesh transforms.
    inverse_bind: mat3x4<f32>,
    // Its bone in the character's slot, or `STILL_JOINT`.
    bone: u32,
    // -1 where the joint's mesh's own transform in the character (its entity's, as Bevy spawns
    // the model) mirrors it, else 1: Bevy turns such a mesh's tangents over, skinned or not.
    handedness: f32,
}

struct CrowdParams {
    // Bones per character slot in `crowd_bones`.
    stride: u32,
}

struct CrowdPlacing {
    // 1: the part is placed by its own transform (its character's, which Bevy sorts a blended
    // or transmissive part by); 0: it stays at the identity, its character's place in
    // `crowd_bones`.
    by_entity: u32,
}

// Two or three frames of places and bones: which rows hold this frame's, last frame's and the
// frame before last's (the frames take turns; where two are kept, `before_last` is `current`),
// the slots a frame holds, and the first row of the held marks; then the rows (from byte 32).
struct CrowdBones {
    current: u32,
    previous: u32,
    before_last: u32,
    slots: u32,
    held: u32,
    rows: array<mat3x4<f32>>,
}

@group(#{MATERIAL_BIND_GROUP}) @binding(100) var<storage, read> crowd_bones: CrowdBones;
@group(#{MATERIAL_BIND_GROUP}) @binding(101) var<storage, read> crowd_joints: array<CrowdJoint>;
@group(#{MATERIAL_BIND_GROUP}) @binding(102) var<uniform> crowd_params: CrowdParams;
@group(#{MATERIAL_BIND_GROUP}) @binding(103) var<uniform> crowd_placing: CrowdPlacing;

// The vertex as Bevy's mesh pipeline lays it out for this pass (`forward_io` or `prepass_io`),
// plus the crowd's own joints and weights at locations 14 and 15.
struct CrowdVertex {
    @builtin(instance_index) instance_index: u32,
#ifdef PREPASS_PIPELINE
    @location(0) position: vec3<f32>,
#ifdef VERTEX_UVS_A
    @location(1) uv: vec2<f32>,
#endif
#ifdef VERTEX_UVS_B
    @location(2) uv_b: vec2<f32>,
#endif
#ifdef NORMAL_PREPASS_OR_DEFERRED_PREPASS
#ifdef VERTEX_NORMALS
    @location(3) normal: vec3<f32>,
#endif
#ifdef VERTEX_TANGENTS
    @location(4) tangent: vec4<f32>,
#endif
#endif
#ifdef VERTEX_COLORS
    @location(7) color: vec4<f32>,
#endif
#else // PREPASS_PIPELINE
    @location(0) position: vec3<f32>,
#ifdef VERTEX_NORMALS
    @location(1) normal: vec3<f32>,
#endif
#ifdef VERTEX_UVS_A
    @location(2) uv: vec2<f32>,
#endif
#ifdef VERTEX_UVS_B
    @location(3) uv_b: vec2<f32>,
#endif
#ifdef VERTEX_TANGENTS
    @location(4) tangent: vec4<f32>,
#endif
#ifdef VERTEX_COLORS
    @location(5) color: vec4<f32>,
#endif
#endif // PREPASS_PIPELINE
    @location(14) crowd_joint_indices: vec4<u32>,
    @location(15) crowd_joint_weights: vec4<f32>,
}

// The vertex's character's place in the frame whose rows start at `base`, last frame's if
// `last` (for a part placed by its own transform, that transform).
fn crowd_place(vertex: CrowdVertex, base: u32, last: bool) -> mat4x4<f32> {
    if crowd_placing.by_entity != 0u {
        if last {
            return mesh_functions::get_previous_world_from_local(vertex.instance_index);
        }
        return mesh_functions::get_world_from_local(vertex.instance_index);
    }
    let slot = mesh_functions::get_tag(vertex.instance_index);
    return affine3_to_square(crowd_bones.rows[base + slot]);
}

// Joint `joint_index`'s skin matrix, the character's bones starting at row `first`.
fn skin_matrix(first: u32, joint_index: u32) -> mat4x4<f32> {
    let joint = crowd_joints[joint_index];
    if joint.bone == STILL_JOINT {
        return affine3_to_square(joint.inverse_bind);
    }
    let bone = crowd_bones.rows[first + joint.bone];
    return affine3_to_square(bone) * affine3_to_square(joint.inverse_bind);
}

// The first row of the frame's rows that hold `slot`'s bones for the frame whose rows start at
// `base` (this frame's, or last frame's for motion vectors), by the slot's held mark (as
// `held_marks` writes them): 0, those rows; 1, held this frame (its rows not written): last
// frame's rows hold both frames' bones; 2, written this frame and held last frame: the bones it
// showed last frame are the frame before last's. (Where the buffer keeps two frames, those are
// this frame's rows, and such a skin has no motion vectors.)
fn bones_rows(slot: u32, base: u32) -> u32 {
    let i = slot % 12u;
    let mark = crowd_bones.rows[crowd_bones.held + slot / 12u][i / 4u][i % 4u];
    if mark == 1.0 {
        return crowd_bones.previous;
    }
    if mark == 2.0 && base != crowd_bones.current {
        return crowd_bones.before_last;
    }
    return base;
}

// World from the mesh's local space in the frame whose rows start at `base`: the character's
// place times the weighted sum of the vertex's skin matrices (summed as Bevy's
// `skinning::skin_model` sums joint matrices).
fn crowd_world_from_local(vertex: CrowdVertex, base: u32, last: bool) -> mat4x4<f32> {
    let slot = mesh_functions::get_tag(vertex.instance_index);
    let first = bones_rows(slot, base) + crowd_bones.slots + slot * crowd_params.stride;
    let j = vertex.crowd_joint_indices;
    let w = vertex.crowd_joint_weights;
    let skin = w.x * skin_matrix(first, j.x) + w.y * skin_matrix(first, j.y)
        + w.z * skin_matrix(first, j.z) + w.w * skin_matrix(first, j.w);
    return crowd_place(vertex, base, last) * skin;
}

// A tangent through the skinned matrix, as Bevy's `mesh_tangent_local_to_world` takes it, its
// handedness flipped by the sign of the mesh entity's transform as Bevy flips it: the
// character's place (here, not the part's identity transform) times the mesh's own transform in
// the character (its joints' `handedness`).
fn skinned_tangent(world_from_local: mat4x4<f32>, tangent: vec4<f32>, vertex: CrowdVertex) -> vec4<f32> {
    if all(tangent == vec4<f32>(0.0)) {
        return tangent;
    }
    let m = mat3x3<f32>(world_from_local[0].xyz, world_from_local[1].xyz, world_from_local[2].xyz);
    let place = crowd_place(vertex, crowd_bones.current, false);
    let placed = select(-1.0, 1.0, determinant(mat3x3<f32>(place[0].xyz, place[1].xyz, place[2].xyz)) >= 0.0);
    let own = crowd_joints[vertex.crowd_joint_indices.x].handedness;
    return vec4<f32>(normalize(m * tangent.xyz), tangent.w * placed * own);
}

// A normal through the skinned matrix: its upper 3×3's inverse transpose (cofactors over the
// determinant), normalised.
fn skinned_normal(world_from_local: mat4x4<f32>, normal: vec3<f32>) -> vec3<f32> {
    let m = mat3x3<f32>(world_from_local[0].xyz, world_from_local[1].xyz, world_from_local[2].xyz);
    let x = cross(m[1], m[2]);
    let y = cross(m[2], m[0]);
    let z = cross(m[0], m[1]);
    let det = dot(m[2], z);
    return normalize(mat3x3<f32>(x / det, y / det, z / det) * normal);
}

@vertex
fn vertex(vertex: CrowdVertex) -> VertexOutput {
    var out: VertexOutput;
    let world_from_local = crowd_world_from_local(vertex, crowd_bones.current, false);
    out.world_position = mesh_functions::mesh_position_local_to_world(
        world_from_local,
        vec4<f32>(vertex.position, 1.0)
    );
    out.position = position_world_to_clip(out.world_position.xyz);

#ifdef PREPASS_PIPELINE
#ifdef UNCLIPPED_DEPTH_ORTHO_EMULATION
    out.unclipped_depth = out.position.z;
    out.position.z = min(out.position.z, 1.0);
#endif
#ifdef NORMAL_PREPASS_OR_DEFERRED_PREPASS
#ifdef VERTEX_NORMALS
    out.world_normal = skinned_normal(world_from_local, vertex.normal);
#endif
#ifdef VERTEX_TANGENTS
    out.world_tangent = skinned_tangent(world_from_local, vertex.tangent, vertex);
#endif
#endif
#ifdef MOTION_VECTOR_PREPASS
    // Where the vertex was last frame: the character's last place times last frame's skin
    // (Bevy's `SkinnedMesh` takes last frame's joint matrices the same way).
    let previous_world_from_local = crowd_world_from_local(vertex, crowd_bones.previous, true);
    out.previous_world_position = mesh_functions::mesh_position_local_to_world(
        previous_world_from_local,
        vec4<f32>(vertex.position, 1.0)
    );
#endif
#else // PREPASS_PIPELINE
#ifdef VERTEX_NORMALS
    out.world_normal = skinned_normal(world_from_local, vertex.normal);
#endif
#ifdef VERTEX_TANGENTS
    out.world_tangent = skinned_tangent(world_from_local, vertex.tangent, vertex);
#endif
#endif // PREPASS_PIPELINE

#ifdef VERTEX_UVS_A
    out.uv = vertex.uv;
#endif
#ifdef VERTEX_UVS_B
    out.uv_b = vertex.uv_b;
#endif
#ifdef VERTEX_COLORS
    out.color = vertex.color;
#endif
#ifdef VERTEX_OUTPUT_INSTANCE_INDEX
    out.instance_index = vertex.instance_index;
#endif
#ifdef VISIBILITY_RANGE_DITHER
    out.visibility_range_dither = mesh_functions::get_visibility_range_dither_level(
        vertex.instance_index,
        crowd_place(vertex, crowd_bones.current, false)[3]
    );
#endif
    return out;
}
