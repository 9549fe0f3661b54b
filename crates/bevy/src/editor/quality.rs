//! What the editor draws on the adapter it got: on a software renderer (Mesa's lavapipe or
//! llvmpipe, WARP: wgpu's `DeviceType::Cpu`) the default 2 km view with cascaded shadows ran
//! at 0–1 frames per second and input lagged by tens of seconds, so the editor starts there
//! with a view it can hold, no shadows and no multisampling, says so in the HUD, and lets the
//! user raise the view and shadows (the view slider and the shadows box in the HUD's
//! details).

use bevy::prelude::*;
use bevy::render::renderer::RenderAdapterInfo;
use bevy::render::view::Msaa;

use super::EditorStatus;
use crate::{LoamSettings, LoamWorld};

/// The view distance the editor starts with on a software renderer, metres: level 0 and two
/// coarser levels at 1 m voxels.
pub const SOFTWARE_VIEW_M: f64 = 384.0;

/// The editor's drawing quality for its adapter.
#[derive(Resource, Debug, Clone, PartialEq)]
pub struct RenderQuality {
    /// The adapter's name where it renders in software (`None` on a GPU, or until the
    /// renderer has started).
    pub software: Option<String>,
    /// Whether the sun casts shadows (off on a software renderer, the box in the HUD turns
    /// them on).
    pub shadows: bool,
    /// Keep the world's view distance on a software renderer (it was chosen, e.g. with
    /// `loam edit --view-distance`); shadows still start off.
    pub keep_view: bool,
    /// Whether the adapter has been looked at.
    pub(super) checked: bool,
}

impl Default for RenderQuality {
    fn default() -> Self {
        Self {
            software: None,
            shadows: true,
            keep_view: false,
            checked: false,
        }
    }
}

/// Once the renderer has its adapter: on a software one, a shorter view (where the world has
/// levels of detail and a longer one, unless [`RenderQuality::keep_view`]) and no shadows,
/// with a message.
pub(crate) fn adapt_to_adapter(
    info: Option<Res<RenderAdapterInfo>>,
    mut quality: ResMut<RenderQuality>,
    mut settings: ResMut<LoamSettings>,
    world: Res<LoamWorld>,
    mut status: ResMut<EditorStatus>,
    mut cameras: Query<&mut Msaa, With<Camera3d>>,
) {
    let Some(info) = info else {
        return;
    };
    if quality.checked {
        return;
    }
    quality.checked = true;
    if info.device_type != wgpu_types::DeviceType::Cpu {
        return;
    }
    quality.software = Some(info.name.clone());
    quality.shadows = false;
    // Four samples per pixel cost the software rasterizer about as much as four frames.
    for mut msaa in &mut cameras {
        *msaa = Msaa::Off;
    }
    let s = world.world.settings();
    let view = if !quality.keep_view && s.lod_levels > 0 && s.view_distance > SOFTWARE_VIEW_M {
        settings.view_distance = Some(SOFTWARE_VIEW_M);
        format!("view {SOFTWARE_VIEW_M:.0} m (was {:.0} m)", s.view_distance)
    } else {
        format!("view {:.0} m", s.view_distance)
    };
    status.message = format!(
        "software renderer ({}): {view}, no shadows; raise them in the details",
        info.name
    );
}

/// The sun's shadows follow [`RenderQuality::shadows`] once it changes from what the lights
/// were spawned with (on: a game's own lights are left alone until then).
pub(crate) fn apply_shadows(
    quality: Res<RenderQuality>,
    mut last: Local<Option<bool>>,
    mut suns: Query<&mut DirectionalLight>,
) {
    if *last == Some(quality.shadows) || (last.is_none() && quality.shadows) {
        *last = Some(quality.shadows);
        return;
    }
    *last = Some(quality.shadows);
    for mut sun in &mut suns {
        if sun.shadow_maps_enabled != quality.shadows {
            sun.shadow_maps_enabled = quality.shadows;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bevy::render::renderer::WgpuWrapper;
    use loam_field::{CaveSettings, Field, FieldSettings, Generator, NoiseTerrainSettings};
    use loam_world::{World, WorldSettings};
    use wgpu_types::{AdapterInfo, Backend, DeviceType};

    use super::*;

    fn adapter(device_type: DeviceType) -> RenderAdapterInfo {
        RenderAdapterInfo(WgpuWrapper::new(AdapterInfo {
            name: "llvmpipe (LLVM 19.1.7, 256 bits)".into(),
            vendor: 0x10005,
            device: 0,
            device_type,
            device_pci_bus_id: String::new(),
            driver: "llvmpipe".into(),
            driver_info: String::new(),
            backend: Backend::Vulkan,
            subgroup_min_size: 4,
            subgroup_max_size: 128,
            transient_saves_memory: false,
        }))
    }

    /// The editor's systems on an app whose renderer reports `adapter` (or none yet), with a
    /// 2 km view of levels of detail and a shadowed sun.
    fn app(adapter: Option<RenderAdapterInfo>) -> App {
        let g = Generator::noise(
            &NoiseTerrainSettings::default(),
            &CaveSettings {
                enabled: false,
                ..Default::default()
            },
        )
        .unwrap();
        let field = Field::new(FieldSettings::default(), Arc::new(g)).unwrap();
        let settings = WorldSettings {
            lod_levels: 5,
            view_distance: 2048.0,
            threads: 1,
            ..Default::default()
        };
        let mut app = App::new();
        app.add_plugins(MinimalPlugins)
            .init_resource::<RenderQuality>()
            .init_resource::<LoamSettings>()
            .init_resource::<EditorStatus>()
            .insert_resource(LoamWorld::new(World::new(field, settings).unwrap()))
            .add_systems(Update, (adapt_to_adapter, apply_shadows).chain());
        if let Some(a) = adapter {
            app.insert_resource(a);
        }
        app.world_mut().spawn(DirectionalLight {
            shadow_maps_enabled: true,
            ..Default::default()
        });
        app.world_mut().spawn((Camera3d::default(), Msaa::Sample4));
        app
    }

    fn msaa(app: &mut App) -> Msaa {
        let mut q = app.world_mut().query::<&Msaa>();
        *q.single(app.world()).unwrap()
    }

    fn sun_shadows(app: &mut App) -> bool {
        let mut q = app.world_mut().query::<&DirectionalLight>();
        q.single(app.world()).unwrap().shadow_maps_enabled
    }

    #[test]
    fn a_software_renderer_starts_with_a_short_view_and_no_shadows() {
        let mut app = app(Some(adapter(DeviceType::Cpu)));
        app.update();
        let q = app.world().resource::<RenderQuality>().clone();
        assert_eq!(
            q.software.as_deref(),
            Some("llvmpipe (LLVM 19.1.7, 256 bits)")
        );
        assert!(!q.shadows);
        assert!(!sun_shadows(&mut app));
        assert_eq!(msaa(&mut app), Msaa::Off);
        let s = app.world().resource::<LoamSettings>();
        assert_eq!(s.view_distance, Some(SOFTWARE_VIEW_M));
        let msg = &app.world().resource::<EditorStatus>().message;
        assert!(
            msg.contains("software renderer") && msg.contains("was 2048 m"),
            "{msg}"
        );
        // The user turns shadows back on; the editor does not undo it.
        app.world_mut().resource_mut::<RenderQuality>().shadows = true;
        app.update();
        app.update();
        assert!(sun_shadows(&mut app));
        assert_eq!(
            app.world().resource::<LoamSettings>().view_distance,
            Some(SOFTWARE_VIEW_M)
        );
    }

    #[test]
    fn a_chosen_view_is_kept_on_a_software_renderer() {
        let mut app = app(Some(adapter(DeviceType::Cpu)));
        app.world_mut().resource_mut::<RenderQuality>().keep_view = true;
        app.update();
        assert_eq!(app.world().resource::<LoamSettings>().view_distance, None);
        assert!(!app.world().resource::<RenderQuality>().shadows);
        let msg = &app.world().resource::<EditorStatus>().message;
        assert!(msg.contains("view 2048 m, no shadows"), "{msg}");
    }

    #[test]
    fn a_gpu_or_no_adapter_yet_keeps_the_view_and_shadows() {
        for adapter in [None, Some(adapter(DeviceType::DiscreteGpu))] {
            let mut app = app(adapter);
            app.update();
            app.update();
            let q = app.world().resource::<RenderQuality>();
            assert!(q.software.is_none() && q.shadows);
            assert!(sun_shadows(&mut app));
            assert_eq!(msaa(&mut app), Msaa::Sample4);
            assert_eq!(app.world().resource::<LoamSettings>().view_distance, None);
            assert!(app.world().resource::<EditorStatus>().message.is_empty());
        }
    }
}
