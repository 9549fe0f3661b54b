//! The editor's input: mouse capture, keys, camera motion, aiming and the tool.

use loam_world::Instant;

use bevy::input::mouse::{AccumulatedMouseMotion, MouseScrollUnit, MouseWheel};
use bevy::prelude::*;
use bevy::window::{CursorGrabMode, CursorOptions, PrimaryWindow};
use bevy_egui::EguiContexts;
use loam_mesh::Mesher;
use loam_world::{DEFAULT_REPEAT, StrokeClock};

use super::block_tool::{self, BlockAim, ToolKind};
use super::sink::{Direction, EditSink};
use super::{
    CameraRig, EditorCamera, EditorStatus, EditorTool, Journal, MoveMode, TOOL_REACH_M, ToolMarker,
    captured,
};
use crate::blocks::LoamBlocks;
use crate::tool::Brush;
use crate::walk::{self, Physics, WalkFocus};
use crate::{LoamSettings, LoamWorld, WorldFile};
use loam_physics::MoveInput;

/// Mouse-look sensitivity, radians per pixel.
const LOOK_PER_PIXEL: f32 = 0.0025;

/// Pixels of a pixel-unit scroll (touchpads) that count as one wheel notch.
const PIXELS_PER_NOTCH: f32 = 40.0;

/// The wheel notches of one frame's scroll `events` (unit, vertical amount; up positive):
/// every event counts, a line being one notch and [`PIXELS_PER_NOTCH`] pixels another.
/// What is left of a notch is kept in `carry` (notches, less than one either way) for the
/// next frame, so a touchpad's small scrolls add up; a turn of direction drops it.
fn wheel_notches(events: impl IntoIterator<Item = (MouseScrollUnit, f32)>, carry: &mut f32) -> i32 {
    let frame: f32 = events
        .into_iter()
        .map(|(unit, y)| match unit {
            MouseScrollUnit::Line => y,
            MouseScrollUnit::Pixel => y / PIXELS_PER_NOTCH,
        })
        .filter(|y| y.is_finite())
        .sum();
    if frame == 0.0 {
        return 0;
    }
    if frame.signum() != carry.signum() {
        *carry = 0.0;
    }
    let total = *carry + frame;
    let notches = total.trunc();
    *carry = total - notches;
    notches.clamp(-1000.0, 1000.0) as i32
}

/// A click captures the mouse (unless it is over the palette); Esc releases it.
pub(crate) fn grab_cursor(
    mut cursor: Query<&mut CursorOptions, With<PrimaryWindow>>,
    buttons: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    mut egui: EguiContexts,
    mut tool: ResMut<EditorTool>,
) {
    let Ok(mut c) = cursor.single_mut() else {
        return;
    };
    let over_ui = egui
        .ctx_mut()
        .is_ok_and(|ctx| ctx.is_pointer_over_egui() || ctx.egui_wants_pointer_input());
    if keys.just_pressed(KeyCode::Escape) {
        c.grab_mode = CursorGrabMode::None;
        c.visible = true;
    } else if c.grab_mode == CursorGrabMode::None
        && !over_ui
        && buttons.any_just_pressed([MouseButton::Left, MouseButton::Right])
    {
        // X11 and Windows cannot lock the cursor in place; confined and hidden, it still
        // gives relative motion for looking around.
        c.grab_mode = if cfg!(target_os = "macos") {
            CursorGrabMode::Locked
        } else {
            CursorGrabMode::Confined
        };
        c.visible = false;
        tool.capture_click = true;
    }
}

/// T, M, F, L, Ctrl+Z, Ctrl+Y, Ctrl+S, Ctrl+Q and the wheel.
#[allow(clippy::too_many_arguments)]
pub(crate) fn keys(
    keys: Res<ButtonInput<KeyCode>>,
    mut wheel: MessageReader<MouseWheel>,
    mut wheel_carry: Local<f32>,
    (mut tool, mut rig, mut status, mut journal): (
        ResMut<EditorTool>,
        ResMut<CameraRig>,
        ResMut<EditorStatus>,
        ResMut<Journal>,
    ),
    mut settings: ResMut<LoamSettings>,
    file: Option<Res<WorldFile>>,
    mut sink: EditSink,
    cursor: Query<&CursorOptions, With<PrimaryWindow>>,
    mut exit: MessageWriter<AppExit>,
    mut lod_debug: ResMut<crate::LodDebugView>,
) {
    let ctrl = keys.any_pressed([KeyCode::ControlLeft, KeyCode::ControlRight]);
    if keys.just_pressed(KeyCode::KeyL) && !ctrl {
        lod_debug.on = !lod_debug.on;
        status.message = if lod_debug.on {
            "chunks tinted by level: 0 white, 1 red, 2 blue, 3 magenta, 4 cyan, 5 yellow".into()
        } else {
            "level tint off".into()
        };
    }
    // Every notch of the frame counts (several arrive in one frame when frames are slow).
    let scrolled: Vec<_> = wheel.read().map(|w| (w.unit, w.y)).collect();
    let notches = if captured(&cursor) {
        wheel_notches(scrolled, &mut wheel_carry)
    } else {
        *wheel_carry = 0.0;
        0
    };
    if notches != 0 {
        match tool.kind {
            ToolKind::Terrain => tool.terrain.scroll(notches),
            ToolKind::Blocks | ToolKind::Chisel => tool.block.scroll(notches),
        }
    }
    if keys.just_pressed(KeyCode::KeyT) && !ctrl {
        tool.kind = tool.kind.next();
        tool.stroke = None;
        status.message = format!("tool: {}", tool.kind.name());
    }
    if keys.just_pressed(KeyCode::KeyM) && !ctrl {
        // The world switches to it in `LoamSet::Follow`, this frame.
        let all = Mesher::ALL;
        let current = sink.world.world.settings().mesher;
        let i = all.iter().position(|m| *m == current).unwrap_or(0);
        let next = all[(i + 1) % all.len()];
        settings.mesher = Some(next);
        // With levels of detail MC33 is drawn by Marching Cubes (it has no level seams of
        // its own; Transvoxel's are Marching Cubes'): say so rather than switch silently.
        let lod = sink.world.world.settings().lod_levels > 0;
        status.message = if lod && loam_world::lod::lod_mesher(next) != next {
            format!(
                "mesher: {} (levels of detail draw it as Marching Cubes; it applies with levels off)",
                next.name()
            )
        } else {
            format!("mesher: {}", next.name())
        };
    }
    if keys.just_pressed(KeyCode::KeyF) && !ctrl {
        rig.mode = match rig.mode {
            MoveMode::Fly => MoveMode::Walk,
            MoveMode::Walk => MoveMode::Fly,
        };
    }
    let direction = if ctrl && keys.just_pressed(KeyCode::KeyZ) {
        Some(Direction::Undo)
    } else if ctrl && keys.just_pressed(KeyCode::KeyY) {
        Some(Direction::Redo)
    } else {
        None
    };
    if let Some(direction) = direction {
        let action = match direction {
            Direction::Undo => {
                tool.stroke = None;
                journal.undo(sink.terrain_undo_left())
            }
            Direction::Redo => journal.redo(),
        };
        match action {
            Some(action) => run_action(direction, &action, &mut status, &mut sink),
            None => {
                status.message = match direction {
                    Direction::Undo => "nothing to undo",
                    Direction::Redo => "nothing to redo",
                }
                .into();
            }
        }
    }
    if ctrl && keys.just_pressed(KeyCode::KeyS) {
        save(
            &mut status,
            file.as_deref(),
            &sink.world,
            &mut sink.blocks,
            &sink.physics,
        );
    }
    if ctrl && keys.just_pressed(KeyCode::KeyQ) {
        // The save follows in `Last` (as for a closed window).
        exit.write(AppExit::Success);
    }
}

/// Undoes (steps in reverse, block ops by their inverses) or redoes (steps in order, block
/// ops as made) one action of the journal through the [`EditSink`]: terrain steps by the
/// history here or the server's undo and redo of this player's strokes; block ops applied
/// here or sent.
fn run_action(
    direction: Direction,
    action: &loam_session::Action,
    status: &mut EditorStatus,
    sink: &mut EditSink,
) {
    let steps: Vec<&loam_session::Step> = match direction {
        Direction::Undo => action.iter().rev().collect(),
        Direction::Redo => action.iter().collect(),
    };
    for step in steps {
        match step {
            loam_session::Step::Terrain => sink.step_terrain(status, direction),
            loam_session::Step::Block { op, inverse } => {
                let op = match direction {
                    Direction::Undo => inverse,
                    Direction::Redo => op,
                };
                if let Err(e) = sink.block(op) {
                    status.message = e;
                }
            }
        }
    }
}

/// Bakes the world and its blocks into its file (the ops are already there, appended as
/// they happened).
pub(crate) fn save(
    status: &mut EditorStatus,
    file: Option<&WorldFile>,
    world: &LoamWorld,
    blocks: &mut LoamBlocks,
    physics: &Physics,
) {
    status.message = match file {
        None => "no world file: start the editor with `loam edit FILE` to save".into(),
        Some(file) => match file.save(&world.world, Some(blocks), Some(physics)) {
            Ok(saved) => saved.to_string(),
            Err(e) => format!("save failed: {e}"),
        },
    };
}

/// Fly: WASD in the view's horizontal plane, Q/E down/up, Shift ×4, mouse look while
/// captured. (Walk mode moves the character instead; see [`crate::walk`].)
#[allow(clippy::too_many_arguments)]
pub(crate) fn move_camera(
    mut commands: Commands,
    time: Res<Time>,
    keys: Res<ButtonInput<KeyCode>>,
    motion: Res<AccumulatedMouseMotion>,
    cursor: Query<&CursorOptions, With<PrimaryWindow>>,
    mut rig: ResMut<CameraRig>,
    mut physics: ResMut<Physics>,
    world: Res<LoamWorld>,
    mut camera: Query<&mut Transform, With<EditorCamera>>,
) {
    let Ok(mut t) = camera.single_mut() else {
        return;
    };
    if captured(&cursor) {
        let d = motion.delta * LOOK_PER_PIXEL;
        rig.look.x -= d.x;
        rig.look.y = (rig.look.y - d.y).clamp(-1.54, 1.54);
    }
    t.rotation = Quat::from_euler(EulerRot::YXZ, rig.look.x, rig.look.y, 0.0);
    let forward = Vec3::from(t.forward()).with_y(0.0).normalize_or_zero();
    let right = Vec3::from(t.right()).with_y(0.0).normalize_or_zero();
    let mut v = Vec3::ZERO;
    for (key, dir) in [
        (KeyCode::KeyW, forward),
        (KeyCode::KeyS, -forward),
        (KeyCode::KeyD, right),
        (KeyCode::KeyA, -right),
        (KeyCode::KeyE, Vec3::Y),
        (KeyCode::KeyQ, -Vec3::Y),
    ] {
        if keys.pressed(key) && !keys.any_pressed([KeyCode::ControlLeft, KeyCode::ControlRight]) {
            v += dir;
        }
    }
    let shift = keys.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]);
    let dt = time.delta_secs();
    match rig.mode {
        MoveMode::Fly => {
            walk::stop_walking(&mut physics);
            commands.remove_resource::<WalkFocus>();
            let fast = if shift { 4.0 } else { 1.0 };
            t.translation += v.normalize_or_zero() * rig.fly_speed * fast * dt;
        }
        MoveMode::Walk => {
            let wish = v.with_y(0.0).normalize_or_zero();
            let input = MoveInput {
                wish: [wish.x, wish.z],
                run: shift,
                jump: keys.pressed(KeyCode::Space),
            };
            t.translation = walk::walk_step(&mut physics, &world, t.translation, input, dt);
            commands.insert_resource(WalkFocus(t.translation - Vec3::Y * walk::EYE_HEIGHT_M));
        }
    }
}

/// The field raycast from the screen centre, and for the block tools the nearest of it and
/// the block raycast.
pub(crate) fn aim(
    mut tool: ResMut<EditorTool>,
    world: Res<LoamWorld>,
    blocks: Res<LoamBlocks>,
    camera: Query<&GlobalTransform, With<EditorCamera>>,
) {
    let Ok(t) = camera.single() else {
        return;
    };
    let (o, d) = (t.translation(), t.forward());
    let origin = [o.x, o.y, o.z].map(f64::from);
    let dir = [d.x, d.y, d.z].map(f64::from);
    tool.aim = world
        .world
        .raycast(origin, dir, TOOL_REACH_M)
        .ok()
        .flatten();
    tool.block_aim = match tool.kind {
        ToolKind::Terrain => None,
        ToolKind::Blocks | ToolKind::Chisel => {
            let block = blocks
                .world
                .raycast(origin, dir, TOOL_REACH_M)
                .ok()
                .flatten();
            block_tool::nearest(tool.aim, block)
        }
    };
}

/// The block and chisel tools: one op per click.
pub(crate) fn apply_block_tool(
    buttons: Res<ButtonInput<MouseButton>>,
    cursor: Query<&CursorOptions, With<PrimaryWindow>>,
    (mut tool, mut status, mut journal): (
        ResMut<EditorTool>,
        ResMut<EditorStatus>,
        ResMut<Journal>,
    ),
    mut sink: EditSink,
) {
    if tool.kind == ToolKind::Terrain || !captured(&cursor) {
        return;
    }
    // The click that captured the mouse places nothing; it is done once released (within
    // the same frame for a click shorter than a frame).
    if tool.capture_click {
        if !buttons.any_pressed([MouseButton::Left, MouseButton::Right]) {
            tool.capture_click = false;
        }
        return;
    }
    let primary = if buttons.just_pressed(MouseButton::Left) {
        true
    } else if buttons.just_pressed(MouseButton::Right) {
        false
    } else {
        return;
    };
    let Some(aim) = tool.block_aim else {
        return;
    };
    let Some(action) = block_tool::block_op(
        tool.kind,
        tool.block,
        aim,
        primary,
        &sink.blocks,
        sink.world.world.field(),
    ) else {
        return;
    };
    // A block that could not go on the pad (another block there, a bad material) is refused
    // before the ground is levelled for it.
    if action.levelling.is_some()
        && let loam_blocks::BlockOp::Place {
            at,
            material,
            shape,
            paint,
        } = action.op
        && let Err(e) = sink.blocks.world.store().check_place(
            at,
            &loam_blocks::BlockSpec {
                material,
                shape,
                paint,
            },
            sink.blocks.world.materials(),
            &loam_blocks::NoGround,
            0.0,
        )
    {
        status.message = format!("place refused: {e}");
        return;
    }
    // The undo step, from the blocks as they are before the op (none for an op that is not
    // undoable: breaking a block off rubble).
    let block_step = loam_session::block_step(&action.op, sink.blocks.world.store());
    let mut record: loam_session::Action = Vec::new();
    // The pad first, then the block (joined: sent in this order; the block's records come
    // back in the server's order, `remote::sync`).
    if let Some(levelling) = action.levelling {
        if !sink.terrain(&mut status, None, levelling) {
            return;
        }
        record.push(loam_session::Step::Terrain);
    }
    match sink.block(&action.op) {
        Ok(()) => record.extend(block_step),
        Err(e) => status.message = e,
    }
    journal.record(record);
}

/// Held buttons: a press starts a stroke; every 120 ms while held, an op at the current hit.
pub(crate) fn apply_tool(
    buttons: Res<ButtonInput<MouseButton>>,
    cursor: Query<&CursorOptions, With<PrimaryWindow>>,
    camera: Query<&GlobalTransform, With<EditorCamera>>,
    (mut tool, mut status, mut journal): (
        ResMut<EditorTool>,
        ResMut<EditorStatus>,
        ResMut<Journal>,
    ),
    mut sink: EditSink,
) {
    let now = Instant::now();
    // A click shorter than a frame (slow frames) counts: pressed, or pressed and released.
    let held = |b| buttons.pressed(b) || buttons.just_pressed(b);
    if !captured(&cursor) || tool.kind != ToolKind::Terrain {
        // The block tools release their capturing click themselves (`apply_block_tool`):
        // released here, a click shorter than a frame would reach them as a fresh click.
        tool.stroke = None;
        return;
    }
    // The click that captured the mouse does not edit, until it is released.
    if tool.capture_click {
        if !buttons.any_pressed([MouseButton::Left, MouseButton::Right]) {
            tool.capture_click = false;
        }
        return;
    }
    let primary = match (held(MouseButton::Left), held(MouseButton::Right)) {
        (true, _) => Some(true),
        (false, true) => Some(false),
        _ => None,
    };
    let Some(primary) = primary else {
        tool.stroke = None;
        return;
    };
    if tool.stroke.as_ref().is_none_or(|(_, p)| *p != primary) {
        let id = sink.new_stroke();
        tool.stroke = Some((StrokeClock::press(id, now, DEFAULT_REPEAT), primary));
    }
    let Some(hit) = tool.aim else {
        return;
    };
    let forward = camera
        .single()
        .map(|t| Vec3::from(t.forward()).with_y(0.0).normalize_or(Vec3::X))
        .unwrap_or(Vec3::X);
    let Some((clock, _)) = tool.stroke.as_mut() else {
        return;
    };
    if !clock.due(now) {
        return;
    }
    let plane = clock.plane((hit.position, hit.normal));
    let id = clock.id();
    let op = tool.terrain.op(
        hit.position,
        hit.normal,
        primary,
        plane,
        [forward.x, forward.y, forward.z].map(f64::from),
    );
    // Joined, the client thread predicts it at once; the world shows it when its field
    // comes back (within a frame or two).
    if sink.terrain(&mut status, Some(id), op) {
        journal.terrain_stroke(id);
    } else {
        tool.stroke = None;
    }
}

/// The marker sphere at the aim point, sized like the tool; hidden with nothing in reach.
pub(crate) fn place_marker(
    tool: Res<EditorTool>,
    mut marker: Query<(&mut Transform, &mut Visibility), With<ToolMarker>>,
) {
    let Ok((mut t, mut vis)) = marker.single_mut() else {
        return;
    };
    if tool.kind != ToolKind::Terrain {
        // A box-ish marker (a small sphere the size of the block) where the tool acts.
        match tool.block_aim {
            Some(BlockAim::Terrain { point, .. }) => {
                t.translation = Vec3::from_array(point.map(|v| v as f32));
            }
            Some(BlockAim::Block(hit)) => {
                t.translation = Vec3::from_array(hit.point.map(|v| v as f32));
            }
            None => {
                *vis = Visibility::Hidden;
                return;
            }
        }
        t.scale = Vec3::splat(tool.block.size.edge() as f32 * 0.3);
        *vis = Visibility::Visible;
        return;
    }
    match tool.aim {
        Some(hit) => {
            let p = hit.position.map(|v| v as f32);
            t.translation = Vec3::from(p);
            let r = tool.terrain.radius as f32;
            t.scale = Vec3::splat(if tool.terrain.brush == Brush::Cube {
                r * 0.8
            } else {
                r
            });
            *vis = Visibility::Visible;
        }
        None => *vis = Visibility::Hidden,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wheel_notch_of_a_frame_counts() {
        let line = |y| (MouseScrollUnit::Line, y);
        let px = |y| (MouseScrollUnit::Pixel, y);
        let mut carry = 0.0;
        // Eight notches in one frame are eight steps (they were one).
        assert_eq!(wheel_notches([line(1.0); 8], &mut carry), 8);
        assert_eq!(wheel_notches([line(-1.0); 3], &mut carry), -3);
        assert_eq!(wheel_notches([line(2.0), line(-1.0)], &mut carry), 1);
        assert_eq!(wheel_notches([], &mut carry), 0);
        assert_eq!(carry, 0.0);
        // Pixels: 40 to a notch; what is left waits for the next frame.
        assert_eq!(wheel_notches([px(50.0), px(50.0)], &mut carry), 2);
        assert!((carry - 0.5).abs() < 1e-6, "{carry}");
        assert_eq!(wheel_notches([px(20.0)], &mut carry), 1);
        assert!(carry.abs() < 1e-6, "{carry}");
        // Small scrolls add up over frames; a turn drops what was left.
        assert_eq!(wheel_notches([px(30.0)], &mut carry), 0);
        assert_eq!(wheel_notches([px(-30.0)], &mut carry), 0);
        assert_eq!(wheel_notches([px(-30.0)], &mut carry), -1);
        // Both units in one frame.
        carry = 0.0;
        assert_eq!(wheel_notches([line(1.0), px(40.0)], &mut carry), 2);
        // Non-finite amounts are ignored.
        assert_eq!(wheel_notches([line(f32::NAN), line(1.0)], &mut carry), 1);
    }

    /// With the radius's half-metre steps: 8 notches take 3.0 m to 7.0 m.
    #[test]
    fn eight_notches_grow_the_radius_by_four_metres() {
        let mut tool = crate::tool::ToolSettings::default();
        assert_eq!(tool.radius, 3.0);
        let mut carry = 0.0;
        tool.scroll(wheel_notches([(MouseScrollUnit::Line, 1.0); 8], &mut carry));
        assert_eq!(tool.radius, 7.0);
    }
}
