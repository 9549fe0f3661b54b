//! The editor's panels (egui): the HUD, the brush palette with a falloff curve preview, and
//! the crosshair.

use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::prelude::*;
use bevy_egui::{EguiContexts, egui};
use loam_field::Falloff;

use super::block_tool::ToolKind;
use super::players::player_lines;
use super::remote::Remote;
use super::{CameraRig, EditorCamera, EditorStatus, EditorTool, Journal, MoveMode, RenderQuality};
use crate::blocks::LoamBlocks;
use crate::look::PALETTE;
use crate::tool::{Brush, MAX_RADIUS, MIN_RADIUS};
use crate::{ChunkStats, FrameCost, LoamSettings, LoamWorld};
use loam_blocks::BlockSize;

/// Narrowest window, logical pixels, whose palettes start open: a palette (about 340 px from
/// the right edge) stays clear of the crosshair from here on.
const PALETTE_OPEN_FROM_PX: f32 = 720.0;

/// Lowest window, logical pixels, whose HUD starts with all its lines shown (about 260 px of
/// them, more when joined to a server).
const HUD_WHOLE_FROM_PX: f32 = 540.0;

/// Draws the HUD, the palette and the crosshair.
#[allow(clippy::too_many_arguments)]
pub(crate) fn panels(
    mut contexts: EguiContexts,
    (mut tool, rig, status, journal): (
        ResMut<EditorTool>,
        Res<CameraRig>,
        Res<EditorStatus>,
        Res<Journal>,
    ),
    world: Res<LoamWorld>,
    mut settings: ResMut<LoamSettings>,
    stats: Res<ChunkStats>,
    diagnostics: Option<Res<DiagnosticsStore>>,
    camera: Query<&GlobalTransform, With<EditorCamera>>,
    blocks: Res<LoamBlocks>,
    remote: Option<Res<Remote>>,
    (cost, mut quality): (Res<FrameCost>, ResMut<RenderQuality>),
) -> Result {
    let ctx = contexts.ctx_mut()?;
    let fps = diagnostics
        .as_ref()
        .and_then(|d| d.get(&FrameTimeDiagnosticsPlugin::FPS))
        .and_then(|d| d.smoothed());
    let p = camera
        .single()
        .map(|t| t.translation())
        .unwrap_or(Vec3::ZERO);
    let m = world.world.metrics();
    // At most 40 % of the window wide (lines wrap), so the crosshair in the middle stays
    // clear in small windows.
    let hud_width = (ctx.content_rect().width() * 0.4).max(200.0);
    // A small window shows the HUD's first line and the status only (its ▶ opens the rest):
    // whole, it covered half of a 640×360 view.
    let screen = ctx.content_rect();
    let compact = screen.width() < PALETTE_OPEN_FROM_PX || screen.height() < HUD_WHOLE_FROM_PX;
    egui::Area::new(egui::Id::new("hud"))
        .anchor(egui::Align2::LEFT_TOP, [8.0, 8.0])
        .show(ctx, |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_max_width(hud_width);
                let (tool_name, size) = match tool.kind {
                    ToolKind::Terrain => (tool.terrain.brush.name(), tool.terrain.radius),
                    kind => (kind.name(), tool.block.size.edge()),
                };
                ui.label(format!(
                    "tool {tool_name} {size} m   {}   fps {}",
                    match rig.mode {
                        MoveMode::Fly => "fly",
                        MoveMode::Walk => "walk",
                    },
                    fps.map_or("-".into(), |f| format!("{f:.0}"))
                ));
                if !status.message.is_empty() {
                    ui.label(&status.message);
                }
                let details = egui::CollapsingHeader::new("details")
                    .id_salt("hud details")
                    .default_open(!compact)
                    .show(ui, |_| ());
                if details.fully_closed() {
                    return;
                }
                ui.label(format!("mesher {}", world.world.settings().mesher.name()));
                let c = cost.summary();
                let edits = if c.edit_frames > 0 {
                    format!("{:.1} ms", c.edit_max_ms)
                } else {
                    "-".into()
                };
                ui.label(format!(
                    "main thread {:.1} ms/frame (p99 {:.1}), edit frames up to {edits}",
                    c.steady_p50_ms, c.steady_p99_ms
                ));
                ui.horizontal(|ui| {
                    let mut shadows = quality.shadows;
                    if ui.checkbox(&mut shadows, "shadows").changed() {
                        quality.shadows = shadows;
                    }
                    if let Some(name) = &quality.software {
                        ui.label(format!("software renderer: {name}"));
                    }
                });
                ui.label(format!(
                    "chunks loaded {}   waiting {}   shown {}",
                    m.chunks_loaded, m.chunks_waiting, stats.shown
                ));
                let s = world.world.settings();
                if s.lod_levels > 0 {
                    ui.label(format!(
                        "view {:.0} m   {} levels   [L] level tint",
                        s.view_distance, s.lod_levels
                    ));
                }
                if let Some((lo, hi)) = world.world.view_distance_range() {
                    let mut d = world.world.settings().view_distance;
                    let view = egui::Slider::new(&mut d, lo..=hi)
                        .logarithmic(true)
                        .text("view m");
                    if ui.add(view).changed() {
                        settings.view_distance = Some(d);
                    }
                    // The range of --lod-fade: egui clamps the value to the slider's range.
                    let fade_s = egui::Slider::new(&mut settings.lod_fade_s, 0.0..=60.0)
                        .logarithmic(true)
                        .smallest_positive(0.05)
                        .text("level fade s");
                    ui.add(fade_s);
                }
                ui.label(format!("position {:.1} {:.1} {:.1} m", p.x, p.y, p.z));
                let (undo, redo) = journal.counts();
                let undo = match &remote {
                    // This session's actions (terrain strokes and block edits) first.
                    _ if undo + redo > 0 => format!("{undo} (redo {redo})"),
                    // Joined: this player's own strokes on the server.
                    Some(r) => format!("{} (redo {})", r.status.undo.0, r.status.undo.1),
                    // The strokes the opened world's history holds.
                    None => world
                        .world
                        .history()
                        .undo_target()
                        .map_or("-".into(), |s| format!("stroke {s}")),
                };
                ui.label(format!(
                    "ops {}   undo {}   last edit to visible {}",
                    status.ops,
                    undo,
                    stats
                        .last_edit_to_visible_ms
                        .map_or("-".into(), |ms| format!("{ms:.1} ms"))
                ));
                ui.label(format!(
                    "[T] {}   block {} m {}   blocks {}   pieces {}",
                    tool.kind.name(),
                    tool.block.size.edge(),
                    blocks
                        .world
                        .materials()
                        .get(tool.block.material)
                        .map_or("?", |m| m.name.as_str()),
                    blocks.world.store().len(),
                    blocks.world.pieces().count(),
                ));
                if let Some(r) = &remote {
                    let s = &r.status;
                    ui.label(format!(
                        "server {} {}   you #{}",
                        s.url,
                        if s.connected { "connected" } else { "OFFLINE" },
                        s.client_id,
                    ));
                    ui.label(format!(
                        "seq {}   pending {}   rtt {}   others' ops {}",
                        s.seq,
                        s.pending,
                        s.rtt_ms.map_or("-".into(), |ms| format!("{ms:.1} ms")),
                        s.others_ops
                    ));
                    ui.label(format!("players {}", s.players.len() + 1));
                    for line in player_lines(&s.players, p) {
                        ui.label(line);
                    }
                }
            });
        });
    // A palette is about 340 px wide: in a window narrower than this it would cover the
    // crosshair (where the capturing click goes), so it starts folded (its ▶ opens it).
    let open = ctx.content_rect().width() >= PALETTE_OPEN_FROM_PX;
    if tool.kind == ToolKind::Terrain {
        egui::Window::new("Brush")
            .anchor(egui::Align2::RIGHT_TOP, [-8.0, 8.0])
            .resizable(false)
            .default_open(open)
            .show(ctx, |ui| palette(ui, &mut tool));
    } else {
        egui::Window::new("Blocks")
            .anchor(egui::Align2::RIGHT_TOP, [-8.0, 8.0])
            .resizable(false)
            .default_open(open)
            .show(ctx, |ui| block_palette(ui, &mut tool, &blocks));
    }
    // Crosshair at the screen centre.
    let c = ctx.content_rect().center();
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Foreground,
        egui::Id::new("crosshair"),
    ));
    let s = egui::Stroke::new(2.0, egui::Color32::from_white_alpha(220));
    painter.line_segment([c - egui::vec2(9.0, 0.0), c + egui::vec2(9.0, 0.0)], s);
    painter.line_segment([c - egui::vec2(0.0, 9.0), c + egui::vec2(0.0, 9.0)], s);
    Ok(())
}

fn palette(ui: &mut egui::Ui, tool: &mut EditorTool) {
    let tool = &mut tool.terrain;
    egui::Grid::new("brushes").num_columns(2).show(ui, |ui| {
        for (i, b) in Brush::ALL.iter().enumerate() {
            ui.selectable_value(&mut tool.brush, *b, b.name());
            if i % 2 == 1 {
                ui.end_row();
            }
        }
    });
    ui.separator();
    ui.add(
        egui::Slider::new(&mut tool.radius, MIN_RADIUS..=MAX_RADIUS)
            .text("radius m")
            .step_by(0.5),
    );
    ui.add(egui::Slider::new(&mut tool.strength, 0.05..=1.0).text("strength"));
    if tool.brush.is_shape() {
        ui.add(egui::Slider::new(&mut tool.blend, 0.0..=4.0).text("soft blend m"));
    }
    egui::ComboBox::from_label("material")
        .selected_text(PALETTE[usize::from(tool.material).min(PALETTE.len() - 1)].0)
        .show_ui(ui, |ui| {
            for (i, (name, _)) in PALETTE.iter().enumerate() {
                ui.selectable_value(&mut tool.material, i as u8, *name);
            }
        });
    let falloffs = [
        ("smooth", Falloff::Smooth),
        ("sphere", Falloff::Sphere),
        ("sharp", Falloff::Sharp { n: 4.0 }),
        ("linear", Falloff::Linear),
        ("constant", Falloff::Constant),
    ];
    let current = falloffs
        .iter()
        .find(|(_, f)| std::mem::discriminant(f) == std::mem::discriminant(&tool.falloff))
        .map_or("?", |(n, _)| n);
    egui::ComboBox::from_label("falloff")
        .selected_text(current)
        .show_ui(ui, |ui| {
            for (name, f) in falloffs {
                ui.selectable_value(&mut tool.falloff, f, name);
            }
        });
    // The falloff curve: weight against distance from the centre (0 … radius).
    let (rect, _) = ui.allocate_exact_size(egui::vec2(180.0, 60.0), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_stroke(
        rect,
        2.0,
        egui::Stroke::new(1.0, egui::Color32::GRAY),
        egui::StrokeKind::Inside,
    );
    let points: Vec<egui::Pos2> = (0..=48)
        .map(|i| {
            let d = f64::from(i) / 48.0;
            let w = tool.falloff.weight(d).clamp(0.0, 1.0);
            egui::pos2(
                rect.left() + rect.width() * d as f32,
                rect.bottom() - rect.height() * w as f32,
            )
        })
        .collect();
    painter.add(egui::Shape::line(
        points,
        egui::Stroke::new(2.0, egui::Color32::from_rgb(240, 200, 80)),
    ));
}

/// Block size and material; in chisel mode, how it works.
fn block_palette(ui: &mut egui::Ui, tool: &mut EditorTool, blocks: &LoamBlocks) {
    ui.label(match tool.kind {
        ToolKind::Chisel => "left: round the nearest edge   right: sharpen it",
        _ => "left: place on the face aimed at   right: break",
    });
    ui.horizontal(|ui| {
        for size in BlockSize::ALL {
            let label = format!("{} m", size.edge());
            ui.selectable_value(&mut tool.block.size, size, label);
        }
    });
    if tool.kind == ToolKind::Blocks {
        ui.checkbox(&mut tool.block.level_ground, "level the ground")
            .on_hover_text(
                "a block aimed at a slope with no resting level gets a flattened pad under it",
            );
    }
    egui::Grid::new("materials").num_columns(2).show(ui, |ui| {
        for (i, (id, m)) in blocks.world.materials().iter().enumerate() {
            let [r, g, b] = m.colour;
            let text = egui::RichText::new(&m.name).color(egui::Color32::from_rgb(r, g, b));
            ui.selectable_value(&mut tool.block.material, id, text);
            if i % 2 == 1 {
                ui.end_row();
            }
        }
    });
}
