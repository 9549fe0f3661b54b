//! What every Loam view has besides the terrain: sun, sky light, sky colour and distance fog
//! that fades the view radius out instead of ending at a wall.

use bevy::light::CascadeShadowConfigBuilder;
use bevy::pbr::{DistanceFog, FogFalloff};
use bevy::prelude::*;
use loam_field::CHUNK_CELLS;
use loam_world::WorldSettings;

use crate::look::SKY;

/// The sky colour.
pub fn sky() -> Color {
    Color::linear_rgb(SKY[0], SKY[1], SKY[2])
}

/// How far chunks stream around a viewer (metres): with level of detail, the settings' view
/// distance; without, the view radius in chunks times the chunk edge.
pub fn view_distance(settings: &WorldSettings, voxel_size: f64) -> f32 {
    if settings.lod_levels > 0 {
        return settings.view_distance as f32;
    }
    (f64::from(settings.view_radius) * f64::from(CHUNK_CELLS) * voxel_size) as f32
}

/// A camera projection that sees the whole view: Bevy's default perspective with its far
/// plane beyond the sky dome at `view_distance` metres (Bevy's default far plane, 1000 m,
/// would cut a 2 km view).
pub fn projection(view_distance: f32) -> Projection {
    Projection::Perspective(PerspectiveProjection {
        far: (view_distance * 1.1).max(1000.0),
        ..Default::default()
    })
}

/// Distance fog for a view that ends `view_distance` metres away: clear to 45 % of it, fully
/// sky-coloured at 92 %.
pub fn fog(view_distance: f32) -> DistanceFog {
    DistanceFog {
        color: sky(),
        directional_light_color: Color::NONE,
        directional_light_exponent: 24.0,
        falloff: FogFalloff::Linear {
            start: 0.45 * view_distance,
            end: 0.92 * view_distance,
        },
    }
}

/// Marks the sky dome, which follows the camera.
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct SkyDome;

/// Spawns the sky: a sphere around the camera at the view distance, drawn from inside,
/// unlit and fully fogged. The fog colour is tone-mapped in the terrain's shader and the
/// clear colour is not, so a plain clear colour never matches distant terrain; the dome goes
/// through the same shader as the terrain, so the horizon has no seam.
pub fn spawn_sky(
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    materials: &mut Assets<StandardMaterial>,
    view_distance: f32,
) {
    let mesh = Sphere::new(view_distance).mesh().uv(48, 24);
    commands.spawn((
        Mesh3d(meshes.add(mesh)),
        MeshMaterial3d(materials.add(StandardMaterial {
            base_color: sky(),
            unlit: true,
            cull_mode: None,
            ..Default::default()
        })),
        Transform::default(),
        bevy::light::NotShadowCaster,
        SkyDome,
    ));
}

/// Keeps the sky dome centred on the camera.
pub fn follow_sky(
    camera: Query<&GlobalTransform, (With<Camera3d>, Without<SkyDome>)>,
    mut dome: Query<&mut Transform, With<SkyDome>>,
) {
    if let (Ok(c), Ok(mut t)) = (camera.single(), dome.single_mut()) {
        t.translation = c.translation();
    }
}

/// Keeps the fog, the camera's far plane and the sky dome at the world's view distance, which
/// can change while the app runs ([`loam_world::World::set_view_distance`]). The dome was
/// built with the distance of the first frame and is scaled from there.
pub fn follow_view_distance(
    world: Res<crate::LoamWorld>,
    mut cameras: Query<(&mut DistanceFog, &mut Projection), With<Camera3d>>,
    mut dome: Query<&mut Transform, With<SkyDome>>,
    mut seen: Local<Option<(f32, f32)>>,
) {
    let w = &world.world;
    let view = view_distance(w.settings(), w.field().settings().voxel_size);
    let (built, last) = *seen.get_or_insert((view, view));
    if view == last {
        return;
    }
    *seen = Some((built, view));
    for (mut fog_now, mut projection) in &mut cameras {
        *fog_now = fog(view);
        if let (Projection::Perspective(p), Projection::Perspective(want)) =
            (&mut *projection, self::projection(view))
        {
            p.far = want.far;
        }
    }
    for mut t in &mut dome {
        t.scale = Vec3::splat(view / built);
    }
}

/// Spawns the sun (a shadowed directional light, low in the sky so relief reads) and sets the
/// sky colour and the sky's ambient light.
pub fn spawn_lights(commands: &mut Commands, view_distance: f32) {
    commands.insert_resource(ClearColor(sky()));
    commands.insert_resource(GlobalAmbientLight {
        color: Color::linear_rgb(0.75, 0.85, 1.0),
        brightness: 450.0,
        affects_lightmapped_meshes: true,
    });
    commands.spawn((
        DirectionalLight {
            color: Color::linear_rgb(1.0, 0.93, 0.82),
            illuminance: 7_000.0,
            shadow_maps_enabled: true,
            ..Default::default()
        },
        Transform::from_xyz(0.0, 0.0, 0.0).looking_to(Vec3::new(-0.55, -0.62, -0.35), Vec3::Y),
        CascadeShadowConfigBuilder {
            maximum_distance: view_distance.max(32.0),
            first_cascade_far_bound: 24.0,
            ..Default::default()
        }
        .build(),
    ));
}
