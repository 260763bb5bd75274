// A rig's cell shown on a 2D quad. The cell holds AnimeEffects' raw framebuffer: colour
// premultiplied by coverage, gamma-encoded 8-bit values. Blending is premultiplied "over".
// The cell is found from the quad's MeshTag (its index on the page's grid).

#import bevy_sprite::mesh2d_functions as mesh_functions
#ifndef SRGB_OUTPUT
#import bevy_render::color_operations::srgb_to_linear
#endif

struct Grid {
    cell: vec2<f32>,
    page_side: f32,
    columns: u32,
}

@group(#{MATERIAL_BIND_GROUP}) @binding(0) var page: texture_2d<f32>;
@group(#{MATERIAL_BIND_GROUP}) @binding(1) var page_sampler: sampler;
@group(#{MATERIAL_BIND_GROUP}) @binding(2) var<uniform> grid: Grid;

struct Vertex {
    @builtin(instance_index) instance_index: u32,
    @location(0) position: vec3<f32>,
    @location(2) uv: vec2<f32>,
}

struct Out {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
    // The cell's first and last texel centres: linear filtering never reads a neighbour.
    @location(1) @interpolate(flat) lo: vec2<f32>,
    @location(2) @interpolate(flat) hi: vec2<f32>,
}

@vertex
fn vertex(v: Vertex) -> Out {
    let tag = mesh_functions::get_tag(v.instance_index);
    let origin = vec2(f32(tag % grid.columns), f32(tag / grid.columns)) * grid.cell;
    let world_from_local = mesh_functions::get_world_from_local(v.instance_index);
    let world = mesh_functions::mesh2d_position_local_to_world(world_from_local, vec4(v.position, 1.0));
    var out: Out;
    out.clip = mesh_functions::mesh2d_position_world_to_clip(world);
    out.uv = (origin + v.uv * grid.cell) / grid.page_side;
    out.lo = (origin + 0.5) / grid.page_side;
    out.hi = (origin + grid.cell - 0.5) / grid.page_side;
    return out;
}

@fragment
fn fragment(in: Out) -> @location(0) vec4<f32> {
    let c = textureSampleLevel(page, page_sampler, clamp(in.uv, in.lo, in.hi), 0.0);
#ifdef SRGB_OUTPUT
    // The camera composites in sRGB (CompositingSpace::Srgb): the raw values are what an image
    // editor would blend, AnimeEffects' exported image over the scene.
    return c;
#else
    // The camera composites in linear light: un-premultiply, decode, premultiply again.
    if c.a <= 0.0 {
        return vec4(0.0);
    }
    let straight = min(c.rgb / c.a, vec3(1.0));
    return vec4(srgb_to_linear(straight) * c.a, c.a);
#endif
}
