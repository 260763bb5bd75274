// AnimeEffects' compositing of one rig cell (docs/formats/anie.md §4.7–§4.10), replaying a
// `rigplay::anie::program::Program`: the same maths as `rigplay::anie::blend` and the CPU
// reference renderer, with the fixed-function blend (SrcAlpha, OneMinusSrcAlpha / One, One)
// into an Rgba8Unorm target doing `composite`.
//
// Every rig of a page is drawn in page pixels: a vertex's cell pixel (x, y) plus its cell's
// origin (an instance attribute) maps to ndc = (2x/S − 1, 1 − 2y/S) on a page of side S, so rigs
// at the same program are one instanced draw. Fragments outside the instance's cell are
// discarded (a scissor per cell). @builtin(position) in the fragment stage is the page pixel,
// where the destination copy and the clipping mask are read.

struct Layer {
    // The layer's image in the project's atlas: x, y, width, height in texels.
    image: vec4<u32>,
    // alpha8 / 255.
    alpha: f32,
    // 0: blend mode layer, 1: HSV layer, 2: mask write.
    kind: u32,
    // BlendMode in enum order (0 Normal … 19 Divide).
    mode: u32,
    // Blend layer: the clipper id whose mask scales it (0: none). Mask write: the id written.
    mask: u32,
    // Mask write: the id it is clipped by (0: none).
    within: u32,
    // HSV: 1 when the hue is absolute.
    hsv_absolute: u32,
    // HSV: hue (degrees), saturation and value (percent), unused.
    hsv: vec4<i32>,
}

@group(0) @binding(0) var<storage, read> layers: array<Layer>;
// Main pass: the destination copy and the clipping mask. Mask pass: the mask's scratch copy
// (nested clippers only).
@group(0) @binding(1) var copy_color: texture_2d<f32>;
@group(0) @binding(2) var mask_id: texture_2d<u32>;
@group(0) @binding(3) var mask_coverage: texture_2d<f32>;
@group(1) @binding(0) var atlas: texture_2d<f32>;

struct VertexIn {
    @location(0) position: vec2<f32>,
    @location(1) uv: vec2<f32>,
    @location(2) layer: u32,
    // Per rig (instance): its cell on the page (x, y, width, height), its program's first layer
    // entry, the page's side.
    @location(3) cell: vec4<f32>,
    @location(4) base: u32,
    @location(5) side: f32,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(1) @interpolate(flat) layer: u32,
    @location(2) @interpolate(flat) cell: vec4<f32>,
}

@vertex
fn vertex(v: VertexIn) -> VertexOut {
    let p = v.cell.xy + v.position;
    var out: VertexOut;
    out.clip = vec4(2.0 * p.x / v.side - 1.0, 1.0 - 2.0 * p.y / v.side, 0.0, 1.0);
    out.uv = v.uv;
    out.layer = v.base + v.layer;
    out.cell = v.cell;
    return out;
}

// Whether a page pixel lies outside a cell.
fn outside(pixel: vec2<f32>, cell: vec4<f32>) -> bool {
    return pixel.x < cell.x || pixel.y < cell.y || pixel.x >= cell.x + cell.z
        || pixel.y >= cell.y + cell.w;
}

// A quad over the whole cell (a clear): a 4-vertex triangle strip from the vertex index alone.
@vertex
fn cell_vertex(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let corner = vec2(f32(i & 1u), f32((i >> 1u) & 1u));
    return vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}

// Every cell of a page cleared by one instanced draw over the whole page: each instance is a
// cell's rectangle (x, y, width, height in page pixels) and the page's side.
struct CellIn {
    @builtin(vertex_index) i: u32,
    @location(0) rect: vec4<f32>,
    @location(1) side: f32,
}

@vertex
fn cells_vertex(v: CellIn) -> @builtin(position) vec4<f32> {
    let corner = vec2(f32(v.i & 1u), f32((v.i >> 1u) & 1u));
    let p = v.rect.xy + corner * v.rect.zw;
    return vec4(2.0 * p.x / v.side - 1.0, 1.0 - 2.0 * p.y / v.side, 0.0, 1.0);
}

@fragment
fn clear_color() -> @location(0) vec4<f32> {
    return vec4(0.0);
}

struct MaskOut {
    @location(0) id: u32,
    @location(1) coverage: f32,
}

@fragment
fn clear_mask() -> MaskOut {
    return MaskOut(0u, 0.0);
}

fn texel(image: vec4<u32>, x: i32, y: i32) -> vec4<f32> {
    if x < 0 || y < 0 || x >= i32(image.z) || y >= i32(image.w) {
        return vec4(0.0);
    }
    return textureLoad(atlas, vec2(i32(image.x) + x, i32(image.y) + y), 0);
}

// Bilinear filtering with a transparent border, as `raster::sample_bilinear`.
fn sample_image(image: vec4<u32>, uv: vec2<f32>) -> vec4<f32> {
    let p = uv * vec2(f32(image.z), f32(image.w)) - 0.5;
    // A non-finite coordinate samples nothing (as the CPU sampler).
    if !(abs(p.x) < 1e30 && abs(p.y) < 1e30) {
        return vec4(0.0);
    }
    let p0 = floor(p);
    let f = p - p0;
    let i = vec2<i32>(p0);
    let top = mix(texel(image, i.x, i.y), texel(image, i.x + 1, i.y), f.x);
    let bottom = mix(texel(image, i.x, i.y + 1), texel(image, i.x + 1, i.y + 1), f.x);
    return mix(top, bottom, f.y);
}

fn color_burn(a: f32, b: f32) -> f32 {
    if b == 0.0 { return 0.0; }
    return max(1.0 - (1.0 - a) / b, 0.0);
}
fn linear_burn(a: f32, b: f32) -> f32 { return max(a + b - 1.0, 0.0); }
fn color_dodge(a: f32, b: f32) -> f32 {
    if b == 1.0 { return 1.0; }
    return min(a / (1.0 - b), 1.0);
}
fn linear_dodge(a: f32, b: f32) -> f32 { return min(a + b, 1.0); }
fn overlay(a: f32, b: f32) -> f32 {
    if a < 0.5 { return 2.0 * a * b; }
    return 1.0 - 2.0 * (1.0 - a) * (1.0 - b);
}
fn vivid_light(a: f32, b: f32) -> f32 {
    if b < 0.5 { return color_burn(a, 2.0 * b); }
    return color_dodge(a, 2.0 * (b - 0.5));
}

// `blend::blend_channel`: destination a, source b.
fn blend_channel(mode: u32, a: f32, b: f32) -> f32 {
    switch mode {
        case 1u: { return min(a, b); }
        case 2u: { return a * b; }
        case 3u: { return color_burn(a, b); }
        case 4u: { return linear_burn(a, b); }
        case 5u: { return max(a, b); }
        case 6u: { return 1.0 - (1.0 - a) * (1.0 - b); }
        case 7u: { return color_dodge(a, b); }
        case 8u: { return linear_dodge(a, b); }
        case 9u: { return overlay(a, b); }
        case 10u: {
            if a < 0.5 { return 2.0 * a * b + a * a * (1.0 - 2.0 * b); }
            return sqrt(a) * (2.0 * b - 1.0) + 2.0 * a * (1.0 - b);
        }
        case 11u: { return overlay(b, a); }
        case 12u: { return vivid_light(a, b); }
        case 13u: {
            if b < 0.5 { return linear_burn(a, 2.0 * b); }
            return linear_dodge(a, 2.0 * (b - 0.5));
        }
        case 14u: {
            if b < 0.5 { return min(a, 2.0 * b); }
            return max(a, 2.0 * (b - 0.5));
        }
        case 15u: {
            if vivid_light(a, b) < 0.5 { return 0.0; }
            return 1.0;
        }
        case 16u: { return abs(a - b); }
        case 17u: { return a + b - 2.0 * a * b; }
        case 18u: { return max(a - b, 0.0); }
        case 19u: {
            if b == 0.0 { return 0.0; }
            return min(a / b, 1.0);
        }
        default: { return b; }
    }
}

fn rem_euclid(x: f32, m: f32) -> f32 {
    let r = x - m * trunc(x / m);
    if r < 0.0 { return r + m; }
    return r;
}

fn rgb_to_hsv(c: vec3<f32>) -> vec3<f32> {
    let mx = max(max(c.r, c.g), c.b);
    let mn = min(min(c.r, c.g), c.b);
    let d = mx - mn;
    var h = 0.0;
    if d <= 0.0 {
        h = 0.0;
    } else if mx == c.r {
        h = rem_euclid((c.g - c.b) / d, 6.0) / 6.0;
    } else if mx == c.g {
        h = ((c.b - c.r) / d + 2.0) / 6.0;
    } else {
        h = ((c.r - c.g) / d + 4.0) / 6.0;
    }
    var s = 0.0;
    if mx > 0.0 { s = d / mx; }
    return vec3(h, s, mx);
}

fn hsv_channel(hsv: vec3<f32>, offset: f32) -> f32 {
    let k = rem_euclid(hsv.x + offset, 1.0) * 6.0;
    let p = abs(k - 3.0) - 1.0;
    return hsv.z * mix(1.0, clamp(p, 0.0, 1.0), hsv.y);
}

// `blend::hsv_adjust`.
fn hsv_adjust(rgb: vec3<f32>, l: Layer) -> vec3<f32> {
    let hsv = rgb_to_hsv(clamp(rgb, vec3(0.0), vec3(1.0)));
    let hue = f32(l.hsv.x) / 360.0;
    var h = rem_euclid(hsv.x + hue, 1.0);
    if l.hsv_absolute != 0u { h = hue; }
    let s = max(min(hsv.y * f32(l.hsv.y) / 100.0, 1.0), 0.0);
    let v = max(min(hsv.z * f32(l.hsv.z) / 100.0, 1.0), 0.0);
    let out = vec3(h, s, v);
    return vec3(hsv_channel(out, 0.0), hsv_channel(out, 2.0 / 3.0), hsv_channel(out, 1.0 / 3.0));
}

struct FragmentIn {
    @builtin(position) pixel: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(1) @interpolate(flat) layer: u32,
    @location(2) @interpolate(flat) cell: vec4<f32>,
}

// `blend::layer_fragment` and `blend::hsv_fragment`.
@fragment
fn layer(in: FragmentIn) -> @location(0) vec4<f32> {
    if outside(in.pixel.xy, in.cell) {
        discard;
    }
    let l = layers[in.layer];
    let t = clamp(sample_image(l.image, in.uv), vec4(0.0), vec4(1.0));
    if l.kind == 1u {
        return vec4(hsv_adjust(t.rgb, l), l.alpha * t.a);
    }
    let px = vec2<i32>(in.pixel.xy);
    var clip = 1.0;
    if l.mask != 0u {
        if textureLoad(mask_id, px, 0).r != l.mask {
            discard;
        }
        clip = textureLoad(mask_coverage, px, 0).r;
    }
    let src_a = l.alpha * t.a * clip;
    if l.mode == 0u {
        return vec4(t.rgb, src_a);
    }
    let d = textureLoad(copy_color, px, 0);
    let blended = vec3(
        blend_channel(l.mode, d.r, t.r),
        blend_channel(l.mode, d.g, t.g),
        blend_channel(l.mode, d.b, t.b),
    );
    return vec4(d.a * blended + (1.0 - d.a) * t.rgb, src_a);
}

// `blend::clip_coverage` of the clipper's texel alpha times its opacity, as k/255.
fn coverage(alpha: f32) -> f32 {
    return floor(clamp(alpha * 255.0, 0.0, 255.0)) / 255.0;
}

// Mask write, zero pass: the id, coverage 0 (blending off).
@fragment
fn mask_zero(in: FragmentIn) -> MaskOut {
    if outside(in.pixel.xy, in.cell) {
        discard;
    }
    return MaskOut(layers[in.layer].mask, 0.0);
}

// Mask write, add pass: the id write is masked off, coverage blended One + One.
@fragment
fn mask_add(in: FragmentIn) -> MaskOut {
    if outside(in.pixel.xy, in.cell) {
        discard;
    }
    let l = layers[in.layer];
    let a = sample_image(l.image, in.uv).a * l.alpha;
    return MaskOut(l.mask, coverage(a));
}

// A nested clipper: writes only where the mask's copy holds the outer id, scaled by it.
@fragment
fn mask_nested(in: FragmentIn) -> MaskOut {
    if outside(in.pixel.xy, in.cell) {
        discard;
    }
    let l = layers[in.layer];
    let px = vec2<i32>(in.pixel.xy);
    if textureLoad(mask_id, px, 0).r != l.within {
        discard;
    }
    let outer = textureLoad(mask_coverage, px, 0).r;
    let a = sample_image(l.image, in.uv).a * l.alpha * outer;
    return MaskOut(l.mask, coverage(a));
}
