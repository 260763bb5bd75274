// A rig's cell on a 3D plane: unlit, premultiplied alpha (see card.wgsl). No tone mapping is
// applied here; an HDR camera's tone mapping pass still would (use Tonemapping::None).

#import bevy_pbr::forward_io::VertexOutput
#import bevy_render::color_operations::srgb_to_linear

@group(#{MATERIAL_BIND_GROUP}) @binding(0) var page: texture_2d<f32>;
@group(#{MATERIAL_BIND_GROUP}) @binding(1) var page_sampler: sampler;
// The cell on the page in texture coordinates.
struct Cell {
    // Its first (xy) and last (zw) texel centres.
    clamp: vec4<f32>,
    // Its origin (xy) and size (zw).
    rect: vec4<f32>,
}
@group(#{MATERIAL_BIND_GROUP}) @binding(2) var<uniform> cell: Cell;

@fragment
fn fragment(in: VertexOutput) -> @location(0) vec4<f32> {
    let uv = clamp(cell.rect.xy + in.uv * cell.rect.zw, cell.clamp.xy, cell.clamp.zw);
    let c = textureSampleLevel(page, page_sampler, uv, 0.0);
    if c.a <= 0.0 {
        return vec4(0.0);
    }
    let straight = min(c.rgb / c.a, vec3(1.0));
    return vec4(srgb_to_linear(straight) * c.a, c.a);
}
