// The terrain's fragment shader: Bevy's PBR fragment (pbr.wgsl, without decals, meshlets or
// OIT, which the terrain does not use) behind a screen-door window. A fragment is drawn when
// the threshold of its pixel in a 4 x 4 ordered-dither (Bayer) matrix lies in
// [window.x, window.y); see loam_bevy::material::LevelFade.

#import bevy_pbr::{
    pbr_functions::alpha_discard,
    pbr_fragment::pbr_input_from_standard_material,
}

#ifdef PREPASS_PIPELINE
#import bevy_pbr::{
    prepass_io::{VertexOutput, FragmentOutput},
    pbr_deferred_functions::deferred_output,
}
#else
#import bevy_pbr::{
    forward_io::{VertexOutput, FragmentOutput},
    pbr_functions::{apply_pbr_lighting, main_pass_post_lighting_processing},
}
#endif

struct LevelFade {
    window: vec4<f32>,
}

@group(#{MATERIAL_BIND_GROUP}) @binding(100) var<uniform> level_fade: LevelFade;

// (i + 0.5) / 16 for the pixel's entry i of the 4 x 4 Bayer matrix.
fn dither_threshold(frag_coord: vec2<f32>) -> f32 {
    var bayer = array<u32, 16>(0u, 8u, 2u, 10u, 12u, 4u, 14u, 6u, 3u, 11u, 1u, 9u, 15u, 7u, 13u, 5u);
    let c = vec2<u32>(floor(frag_coord)) % 4u;
    return (f32(bayer[c.y * 4u + c.x]) + 0.5) / 16.0;
}

@fragment
fn fragment(
    in: VertexOutput,
    @builtin(front_facing) is_front: bool,
) -> FragmentOutput {
    let d = dither_threshold(in.position.xy);
    if d < level_fade.window.x || d >= level_fade.window.y {
        discard;
    }
    var pbr_input = pbr_input_from_standard_material(in, is_front);
    pbr_input.material.base_color = alpha_discard(pbr_input.material, pbr_input.material.base_color);
#ifdef PREPASS_PIPELINE
    let out = deferred_output(in, pbr_input);
#else
    var out: FragmentOutput;
    out.color = apply_pbr_lighting(pbr_input);
    out.color = main_pass_post_lighting_processing(pbr_input, out.color);
#endif
    return out;
}
