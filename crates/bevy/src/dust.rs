//! Dust: a puff of soft billboards where a piece lands, a block breaks or terrain is dug, in
//! the colour of what it came from mixed half with grey. A small instanced billboard system
//! (no particle crate: bevy_hanabi needs GPU compute, which lavapipe renders slowly): every
//! particle of a puff shares one quad mesh and the puff's material, so Bevy draws them in
//! one batch; the puff fades its material and despawns with its particles when it is done.
//!
//! Per puff of strength `s` in `[0, 1]` ([`PuffSpec::new`]): `round(8 + 56 s)` particles
//! emitted at once from a ball of `0.3 + 0.7 s` metres, up and out at `0.8 + 2.2 s` m/s,
//! slowed by air drag and sinking under a weak 1.5 m/s² gravity, growing, and fading out
//! over `0.6 + 1.8 s` seconds.

use bevy::asset::RenderAssetUsages;
use bevy::image::Image;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};

use crate::effects::{Effect, dig_strength, land_strength};

/// Downward acceleration of dust, m/s² (a weak gravity: dust drifts down).
pub const DUST_GRAVITY: f32 = 1.5;
/// Air drag on dust, 1/s: the speed falls by `e^(−drag · t)`.
pub const DUST_DRAG: f32 = 1.8;
/// Side of the painted spot texture, pixels.
pub const SPOT_PIXELS: u32 = 32;

/// The numbers of one puff.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PuffSpec {
    /// Particles emitted.
    pub count: usize,
    /// Radius of the ball they start in, metres.
    pub radius: f32,
    /// Initial speed, m/s.
    pub speed: f32,
    /// Particle size at birth, metres (it doubles over the puff's life).
    pub size: f32,
    /// Seconds until the puff is gone.
    pub lifetime: f32,
    /// Colour (linear RGB): the source colour mixed half with grey.
    pub colour: [f32; 3],
}

/// Grey that dust is mixed with (linear RGB).
pub const DUST_GREY: [f32; 3] = [0.45, 0.44, 0.42];

impl PuffSpec {
    /// The puff of `strength` (clamped to `[0, 1]`, NaN as 0) in `colour` (linear RGB).
    pub fn new(strength: f32, colour: [f32; 3]) -> Self {
        let s = if strength.is_nan() {
            0.0
        } else {
            strength.clamp(0.0, 1.0)
        };
        Self {
            count: (8.0 + 56.0 * s).round() as usize,
            radius: 0.3 + 0.7 * s,
            speed: 0.8 + 2.2 * s,
            size: 0.25 + 0.45 * s,
            lifetime: 0.6 + 1.8 * s,
            colour: [0, 1, 2].map(|i| 0.5 * colour[i] + 0.5 * DUST_GREY[i]),
        }
    }
}

/// A puff in flight: its age and the material it fades.
#[derive(Component, Debug, Clone)]
pub struct Puff {
    /// Seconds since it was emitted.
    pub age: f32,
    /// What it was made with.
    pub spec: PuffSpec,
    material: Handle<StandardMaterial>,
}

/// One particle of a puff (a child of the [`Puff`] entity).
#[derive(Component, Debug, Clone, Copy)]
pub struct Particle {
    /// Velocity, m/s.
    pub velocity: Vec3,
}

/// The shared quad and spot texture.
#[derive(Resource, Debug, Clone)]
pub struct DustAssets {
    quad: Handle<Mesh>,
    spot: Handle<Image>,
}

/// Puffs counted since start (the seed of each puff's pattern).
#[derive(Resource, Debug, Default, Clone, Copy)]
pub struct DustStats {
    /// Puffs emitted.
    pub puffs: u64,
}

/// Dust from [`Effect`]s.
#[derive(Debug, Clone, Default)]
pub struct DustPlugin;

impl Plugin for DustPlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<Effect>()
            .init_resource::<DustStats>()
            .add_systems(Startup, setup)
            .add_systems(PostUpdate, (emit, animate).chain());
    }
}

/// The soft round spot: white, alpha `(1 − r²)²` inside the unit disc (`r` from the
/// centre, 1 at the edge), RGBA8.
pub fn spot_image() -> Image {
    let n = SPOT_PIXELS;
    let mut data = Vec::with_capacity((n * n * 4) as usize);
    for y in 0..n {
        for x in 0..n {
            let u = (x as f32 + 0.5) / n as f32 * 2.0 - 1.0;
            let v = (y as f32 + 0.5) / n as f32 * 2.0 - 1.0;
            let r2 = (u * u + v * v).min(1.0);
            let a = (1.0 - r2) * (1.0 - r2);
            data.extend([255, 255, 255, (a * 255.0).round() as u8]);
        }
    }
    Image::new(
        Extent3d {
            width: n,
            height: n,
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        data,
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::RENDER_WORLD,
    )
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut images: ResMut<Assets<Image>>,
) {
    commands.insert_resource(DustAssets {
        quad: meshes.add(Rectangle::new(1.0, 1.0)),
        spot: images.add(spot_image()),
    });
}

/// SplitMix64: each puff's own small generator, seeded by its number (no shared RNG).
fn splitmix(state: &mut u64) -> f32 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 24) as f32
}

/// The strength and colour of an effect's puff; `None` for effects without dust.
pub fn puff_of(effect: &Effect) -> Option<(Vec3, f32, [f32; 3])> {
    match *effect {
        Effect::Land {
            at,
            speed,
            mass_kg,
            colour,
        } => Some((at, land_strength(speed, mass_kg), colour)),
        Effect::Break { at, edge, colour } => Some((at, edge.clamp(0.0, 1.0), colour)),
        Effect::Dig { at, radius, colour } => Some((at, dig_strength(radius), colour)),
        Effect::Place { .. } | Effect::Chisel { .. } => None,
    }
}

/// Spawns a puff entity and its particles.
pub fn spawn_puff(
    commands: &mut Commands,
    assets: &DustAssets,
    materials: &mut Assets<StandardMaterial>,
    at: Vec3,
    spec: PuffSpec,
    seed: u64,
) -> Entity {
    let c = spec.colour;
    let material = materials.add(StandardMaterial {
        base_color: Color::linear_rgba(c[0], c[1], c[2], 0.7),
        base_color_texture: Some(assets.spot.clone()),
        alpha_mode: AlphaMode::Blend,
        unlit: true,
        ..Default::default()
    });
    let mut rng = seed.wrapping_mul(0x2545_F491_4F6C_DD1D);
    let mut particles = Vec::with_capacity(spec.count);
    for _ in 0..spec.count {
        // A point in the unit ball (rejection sampling, bounded).
        let mut p = Vec3::ZERO;
        for _ in 0..8 {
            p = Vec3::new(splitmix(&mut rng), splitmix(&mut rng), splitmix(&mut rng)) * 2.0
                - Vec3::ONE;
            if p.length_squared() <= 1.0 {
                break;
            }
        }
        let offset = p * spec.radius;
        let out =
            (p.with_y(0.0) + Vec3::Y * (0.6 + 0.4 * splitmix(&mut rng))).normalize_or(Vec3::Y);
        let velocity = out * spec.speed * (0.5 + 0.5 * splitmix(&mut rng));
        particles.push((offset, velocity));
    }
    commands
        .spawn((
            Transform::from_translation(at),
            Visibility::Visible,
            Puff {
                age: 0.0,
                spec,
                material: material.clone(),
            },
        ))
        .with_children(|parent| {
            for (offset, velocity) in particles {
                parent.spawn((
                    Mesh3d(assets.quad.clone()),
                    MeshMaterial3d(material.clone()),
                    Transform::from_translation(offset).with_scale(Vec3::splat(spec.size)),
                    Particle { velocity },
                ));
            }
        })
        .id()
}

fn emit(
    mut commands: Commands,
    mut effects: MessageReader<Effect>,
    assets: Option<Res<DustAssets>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut stats: ResMut<DustStats>,
) {
    let Some(assets) = assets else {
        return;
    };
    for e in effects.read() {
        if let Some((at, strength, colour)) = puff_of(e) {
            stats.puffs += 1;
            let spec = PuffSpec::new(strength, colour);
            spawn_puff(
                &mut commands,
                &assets,
                &mut materials,
                at,
                spec,
                stats.puffs,
            );
        }
    }
}

/// Moves, turns (towards the camera), grows and fades particles; despawns finished puffs.
fn animate(
    mut commands: Commands,
    time: Res<Time>,
    mut puffs: Query<(Entity, &mut Puff, &Children)>,
    mut particles: Query<(&mut Transform, &mut Particle)>,
    camera: Query<&GlobalTransform, With<Camera3d>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let dt = time.delta_secs();
    let facing = camera
        .iter()
        .next()
        .map_or(Quat::IDENTITY, |t| t.compute_transform().rotation);
    let drag = (-DUST_DRAG * dt).exp();
    for (entity, mut puff, children) in &mut puffs {
        puff.age += dt;
        let t = puff.age / puff.spec.lifetime;
        if t >= 1.0 {
            commands.entity(entity).despawn();
            continue;
        }
        let scale = puff.spec.size * (1.0 + t);
        for child in children.iter() {
            if let Ok((mut tr, mut p)) = particles.get_mut(child) {
                p.velocity = p.velocity * drag - Vec3::Y * DUST_GRAVITY * dt;
                tr.translation += p.velocity * dt;
                tr.rotation = facing;
                tr.scale = Vec3::splat(scale);
            }
        }
        if let Some(mut m) = materials.get_mut(&puff.material) {
            let c = puff.spec.colour;
            m.base_color = Color::linear_rgba(c[0], c[1], c[2], 0.7 * (1.0 - t) * (1.0 - t));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_puff_grows_with_strength() {
        let weak = PuffSpec::new(0.0, [1.0, 0.0, 0.0]);
        let hard = PuffSpec::new(1.0, [1.0, 0.0, 0.0]);
        assert_eq!((weak.count, hard.count), (8, 64));
        assert_eq!(PuffSpec::new(0.5, [0.0; 3]).count, 36);
        assert!((weak.lifetime - 0.6).abs() < 1e-6 && (hard.lifetime - 2.4).abs() < 1e-6);
        assert!((weak.radius - 0.3).abs() < 1e-6 && (hard.radius - 1.0).abs() < 1e-6);
        // Half the source colour, half grey.
        assert!((weak.colour[0] - (0.5 + 0.5 * DUST_GREY[0])).abs() < 1e-6);
        assert_eq!(PuffSpec::new(f32::NAN, [0.0; 3]).count, 8);
    }

    #[test]
    fn the_spot_is_opaque_in_the_middle_and_clear_at_the_rim() {
        let img = spot_image();
        let n = SPOT_PIXELS as usize;
        let data = img.data.expect("pixels");
        let alpha = |x: usize, y: usize| data[(y * n + x) * 4 + 3];
        assert!(alpha(n / 2, n / 2) > 240);
        assert_eq!(alpha(0, 0), 0);
        assert!(alpha(n / 2, 1) < 40);
    }
}
